//! A real S3 API on loopback for the object-storage tests: `moto_server` (`pip install
//! 'moto[server]'`) started on a free port of 127.0.0.1, waited for, given a bucket, and
//! stopped when the [`S3Server`] is dropped.
//!
//! * `moto_server` is looked up as `$HFKIT_MOTO_SERVER`, else on `PATH`.
//! * Missing, with `HFKIT_REQUIRE_S3=1` (`.ci/run` sets it after installing moto): the test
//!   fails.
//! * Missing otherwise: the test prints `SKIP`, is recorded as an object-storage skip of the
//!   run, and passes; `zz_fixture_skips` prints how many were skipped at the end of
//!   `cargo test`, as for the HBase fixtures.
//!
//! Starting a server also sets dummy AWS credentials and region in this process's environment
//! (moto accepts any), unless some are set, so in-process stores and child `hfkit` processes
//! sign their requests.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Names the `moto_server` executable.
pub const MOTO_ENV: &str = "HFKIT_MOTO_SERVER";
/// `1` (or `true`, `yes`): a missing moto fails the test instead of skipping it.
pub const REQUIRE_S3_ENV: &str = "HFKIT_REQUIRE_S3";
/// The bucket every server starts with.
pub const BUCKET: &str = "hfkit-test";
/// Sub-directory of a run's skip directory holding the object-storage skips.
pub(crate) const S3_SKIPS: &str = "s3";

/// A running moto server.
pub struct S3Server {
    child: Child,
    port: u16,
    /// Over TLS: the directory of the certificates (`ca.pem`: the authority that signed the
    /// server's, what a client is given as `SSL_CERT_FILE`), removed on drop.
    tls: Option<PathBuf>,
}

impl S3Server {
    /// Starts a server for test `test` with bucket [`BUCKET`]; `None` (the test returns and
    /// passes) when moto is missing, recorded as a skip; a panic when S3 tests are required
    /// or the server does not come up.
    pub fn start(test: &str) -> Option<S3Server> {
        S3Server::start_with(test, &[])
    }

    /// [`S3Server::start`] of a server that checks credentials: every request after the bucket
    /// is made must be signed with an access key moto's IAM knows, so the dummy credentials
    /// (or any made-up ones) get `403` (moto's `INITIAL_NO_AUTH_ACTION_COUNT`: the readiness
    /// probe and the bucket's creation are the two requests let through).
    pub fn start_checking_credentials(test: &str) -> Option<S3Server> {
        S3Server::start_with(test, &[("INITIAL_NO_AUTH_ACTION_COUNT", "2")])
    }

    /// [`S3Server::start`] of a server speaking HTTPS only ([`S3Server::endpoint`] is
    /// `https://...`), with a certificate for `127.0.0.1` signed by a certificate authority
    /// made for it ([`S3Server::ca_file`]); clients that do not trust that authority are
    /// refused. Certificates are made and the bucket created with the `openssl` command
    /// (required as moto is: missing, the test is skipped or fails alike).
    pub fn start_tls(test: &str) -> Option<S3Server> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hfkit-test-tls-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let made = std::fs::create_dir_all(&dir)
            .map_err(|e| e.to_string())
            .and_then(|_| make_certificates(&dir));
        if let Err(why) = made {
            let _ = std::fs::remove_dir_all(&dir);
            return skip_or_fail(test, &format!("no certificates for TLS: {why}"));
        }
        let (cert, key) = (dir.join("server.pem"), dir.join("server.key"));
        let args = [
            "-c".to_string(),
            cert.display().to_string(),
            "-k".to_string(),
            key.display().to_string(),
        ];
        let server = S3Server::start_args(test, &[], &args, Some(&dir.join("ca.pem")));
        match server {
            Some(mut s) => {
                s.tls = Some(dir);
                Some(s)
            }
            None => {
                let _ = std::fs::remove_dir_all(&dir);
                None
            }
        }
    }

    /// The certificate authority a TLS server's certificate is signed by (for
    /// `SSL_CERT_FILE`); `None` for a plain HTTP server.
    pub fn ca_file(&self) -> Option<PathBuf> {
        self.tls.as_ref().map(|dir| dir.join("ca.pem"))
    }

    fn start_with(test: &str, env: &[(&str, &str)]) -> Option<S3Server> {
        S3Server::start_args(test, env, &[], None)
    }

    /// Starts moto with `env` and the extra `args`; over TLS when `ca` (the authority that
    /// signed its certificate) is given.
    fn start_args(
        test: &str,
        env: &[(&str, &str)],
        args: &[String],
        ca: Option<&std::path::Path>,
    ) -> Option<S3Server> {
        let exe = match moto_executable() {
            Some(e) => e,
            None => {
                let why = format!(
                    "moto_server not found (pip install 'moto[server]', or set {MOTO_ENV})"
                );
                return skip_or_fail(test, &why);
            }
        };
        set_dummy_credentials();
        // A port free now may be taken before moto binds it: try a few.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .unwrap_or_else(|e| panic!("{test}: no free loopback port: {e}"));
            let mut child = Command::new(&exe)
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .args(args)
                .envs(env.iter().copied())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("{test}: cannot start {}: {e}", exe.display()));
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // exited: the port was taken
                }
                let up = match ca {
                    None => request(port, "GET", "/").is_ok(),
                    Some(ca) => tls_request(port, ca, "GET", "/").is_ok(),
                };
                if up {
                    let server = S3Server {
                        child,
                        port,
                        tls: None,
                    };
                    match ca {
                        None => server.create_bucket(BUCKET),
                        Some(ca) => {
                            let status = tls_request(port, ca, "PUT", &format!("/{BUCKET}"))
                                .unwrap_or_else(|e| panic!("create bucket {BUCKET}: {e}"));
                            assert_eq!(status, 200, "create bucket {BUCKET}: HTTP {status}");
                        }
                    }
                    return Some(server);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("{test}: moto_server did not answer on loopback");
    }

    /// `http://127.0.0.1:<port>` (`https://` over TLS): the `--s3-endpoint`.
    pub fn endpoint(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// `s3://hfkit-test/<key>`.
    pub fn url(&self, key: &str) -> String {
        format!("s3://{BUCKET}/{}", key.trim_start_matches('/'))
    }

    /// Creates another bucket.
    pub fn create_bucket(&self, name: &str) {
        let status = request(self.port, "PUT", &format!("/{name}"))
            .unwrap_or_else(|e| panic!("create bucket {name}: {e}"));
        assert_eq!(status, 200, "create bucket {name}: HTTP {status}");
    }
}

impl S3Server {
    /// The multipart uploads in progress (started, neither completed nor aborted) in
    /// [`BUCKET`], by key.
    pub fn multipart_uploads(&self) -> Vec<String> {
        let (status, body) = request_body(self.port, "GET", &format!("/{BUCKET}?uploads"))
            .unwrap_or_else(|e| panic!("list multipart uploads: {e}"));
        assert_eq!(status, 200, "list multipart uploads: HTTP {status}: {body}");
        body.split("<Key>")
            .skip(1)
            .filter_map(|k| k.split_once("</Key>").map(|(k, _)| k.to_string()))
            .collect()
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.tls {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A missing tool: a failure when S3 tests are required, else a recorded skip.
fn skip_or_fail(test: &str, why: &str) -> Option<S3Server> {
    if crate::is_set(std::env::var_os(REQUIRE_S3_ENV)) {
        panic!("{test}: {why}; {REQUIRE_S3_ENV} is set, so this is a failure");
    }
    eprintln!("SKIP {test}: {why}");
    if let Some(run) = crate::run_dir() {
        crate::record_skip(&run.join(S3_SKIPS), &crate::test_name(test));
    }
    None
}

/// Writes into `dir` a certificate authority (`ca.pem`) and a server certificate for the IP
/// address 127.0.0.1 that it signed (`server.pem`, key `server.key`), with `openssl`.
fn make_certificates(dir: &std::path::Path) -> Result<(), String> {
    let ext = dir.join("server.ext");
    std::fs::write(
        &ext,
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n\
         extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n",
    )
    .map_err(|e| e.to_string())?;
    let steps: [&[&str]; 3] = [
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=hfkit test authority",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ],
    ];
    for args in steps {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("openssl: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "openssl {}: {}",
                args[0],
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    Ok(())
}

/// One unsigned HTTPS request without a body through `openssl s_client`, trusting only
/// `ca`; the status code.
fn tls_request(port: u16, ca: &std::path::Path, method: &str, path: &str) -> std::io::Result<u16> {
    let mut child = Command::new("openssl")
        .args(["s_client", "-quiet", "-verify_return_error", "-connect"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-CAfile")
        .arg(ca)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        write_request(&mut stdin, port, method, path)?;
    }
    let out = child.wait_with_output()?;
    status_of(&String::from_utf8_lossy(&out.stdout))
}

/// Writes an HTTP/1.1 request without a body to 127.0.0.1:`port`, closing after the answer.
fn write_request(w: &mut impl Write, port: u16, method: &str, path: &str) -> std::io::Result<()> {
    write!(
        w,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

/// The status code of an HTTP answer's text.
fn status_of(text: &str) -> std::io::Result<u16> {
    text.get(9..12)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {text:?}")))
}

fn moto_executable() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(MOTO_ENV) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("moto_server"))
        .find(|p| p.is_file())
}

fn set_dummy_credentials() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
            std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
            std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
        }
        if std::env::var_os("AWS_REGION").is_none() {
            std::env::set_var("AWS_REGION", "us-east-1");
        }
    });
}

/// One unsigned HTTP/1.1 request without a body; the status code.
fn request(port: u16, method: &str, path: &str) -> std::io::Result<u16> {
    request_body(port, method, path).map(|(status, _)| status)
}

/// One unsigned HTTP/1.1 request without a body; the status code and the answer's text.
fn request_body(port: u16, method: &str, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write_request(&mut s, port, method, path)?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)?;
    let text = String::from_utf8_lossy(&answer).into_owned();
    Ok((status_of(&text)?, text))
}

/// A proxy in front of an [`S3Server`] that forwards every request, logs it
/// ([`ProxiedRequest`]), and answers some itself as its [`Fault`] says instead: request `n`
/// (from 1, counting only the requests the fault applies to) gets the fault when
/// `n % every == 0`, so `every = 1` gives it to them all. Stopped when dropped.
pub struct FaultProxy {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Requests given the fault so far.
    pub failed: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Every request seen, in order.
    pub log: std::sync::Arc<std::sync::Mutex<Vec<ProxiedRequest>>>,
}

/// What a [`FaultProxy`] does to the requests it picks.
#[derive(Clone, Debug)]
pub struct Fault {
    /// Every `every`-th request picked gets the fault (`u64::MAX`: none).
    pub every: u64,
    /// Only requests of this method (`None`: every method).
    pub method: Option<&'static str>,
    /// Only requests whose path (with query) contains this.
    pub path_contains: Option<String>,
    pub answer: FaultAnswer,
}

/// The answer a [`Fault`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultAnswer {
    /// An error status and S3 error code, answered without forwarding (`503 SlowDown`,
    /// `500 InternalError`, `403 AccessDenied`).
    Status(u16, &'static str),
    /// Forwarded, but the answer's body cut to half of its `Content-Length`, then the
    /// connection closed: an object shorter than announced.
    Truncate,
}

impl Fault {
    /// No fault: the proxy only forwards and logs.
    pub fn none() -> Fault {
        Fault {
            every: u64::MAX,
            ..Fault::slow_down(1)
        }
    }

    /// `503 SlowDown` (throttling) on every `every`-th request.
    pub fn slow_down(every: u64) -> Fault {
        Fault {
            every,
            method: None,
            path_contains: None,
            answer: FaultAnswer::Status(503, "SlowDown"),
        }
    }
}

/// A request a [`FaultProxy`] saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxiedRequest {
    pub method: String,
    /// Path and query.
    pub path: String,
    /// A server-side copy (`x-amz-copy-source`).
    pub copy: bool,
    /// Bytes of the request's body.
    pub sent: u64,
    /// Bytes of the answer's body.
    pub received: u64,
    /// The answer's status.
    pub status: u16,
}

impl S3Server {
    /// A [`FaultProxy`] throttling (503 SlowDown) every `every`-th request.
    pub fn fault_proxy(&self, every: u64) -> FaultProxy {
        self.proxy(Fault::slow_down(every))
    }

    /// A [`FaultProxy`] giving `fault`.
    pub fn proxy(&self, fault: Fault) -> FaultProxy {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::{Arc, Mutex};
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port for the proxy");
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        let stop = Arc::new(AtomicBool::new(false));
        let failed = Arc::new(AtomicU64::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let count = Arc::new(AtomicU64::new(0));
        let upstream = self.port;
        let (stop2, failed2, log2) = (stop.clone(), failed.clone(), log.clone());
        let fault = Arc::new(fault);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let (count, failed, log, fault) =
                    (count.clone(), failed2.clone(), log2.clone(), fault.clone());
                std::thread::spawn(move || {
                    let p = Proxied {
                        upstream,
                        fault: &fault,
                        count: &count,
                        failed: &failed,
                        log: &log,
                    };
                    let _ = p.serve(conn);
                });
            }
        });
        FaultProxy {
            port,
            stop,
            failed,
            log,
        }
    }
}

impl FaultProxy {
    /// `http://127.0.0.1:<port>`: use as the `--s3-endpoint`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests seen so far.
    pub fn requests(&self) -> Vec<ProxiedRequest> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// One connection's view of its [`FaultProxy`].
struct Proxied<'a> {
    upstream: u16,
    fault: &'a Fault,
    count: &'a std::sync::atomic::AtomicU64,
    failed: &'a std::sync::atomic::AtomicU64,
    log: &'a std::sync::Mutex<Vec<ProxiedRequest>>,
}

impl Proxied<'_> {
    /// Serves one client connection: each request read whole (head and `Content-Length`
    /// body), then answered with the fault or forwarded on a connection of its own.
    fn serve(&self, conn: TcpStream) -> std::io::Result<()> {
        use std::io::BufRead;
        use std::sync::atomic::Ordering;
        let mut reader = std::io::BufReader::new(conn.try_clone()?);
        let mut client = conn;
        loop {
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line)? == 0 {
                    return Ok(());
                }
                let end = line == "\r\n";
                if !line.to_ascii_lowercase().starts_with("connection:") {
                    head.push_str(&line);
                }
                if end {
                    break;
                }
            }
            let header = |name: &str| {
                head.lines().find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
                })
            };
            let len: usize = header("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut words = head.split_whitespace();
            let method = words.next().unwrap_or("").to_string();
            let path = words.next().unwrap_or("").to_string();
            let mut entry = ProxiedRequest {
                copy: header("x-amz-copy-source").is_some(),
                method,
                path,
                sent: len as u64,
                received: 0,
                status: 0,
            };
            let mut body = vec![0u8; len];
            reader.read_exact(&mut body)?;
            let f = self.fault;
            let picked = f.method.is_none_or(|m| m == entry.method)
                && f.path_contains
                    .as_deref()
                    .is_none_or(|p| entry.path.contains(p));
            let hit =
                picked && (self.count.fetch_add(1, Ordering::Relaxed) + 1).is_multiple_of(f.every);
            if hit {
                self.failed.fetch_add(1, Ordering::Relaxed);
            }
            if let (true, FaultAnswer::Status(status, code)) = (hit, f.answer) {
                let msg = format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code><Message>injected by the test proxy</Message></Error>"
                );
                write!(
                    client,
                    "HTTP/1.1 {status} {code}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\r\n{msg}",
                    msg.len()
                )?;
                entry.status = status;
                entry.received = msg.len() as u64;
                self.log
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(entry);
                continue;
            }
            let mut up = TcpStream::connect(("127.0.0.1", self.upstream))?;
            let head = head.trim_end_matches("\r\n");
            write!(up, "{head}\r\nConnection: close\r\n\r\n")?;
            up.write_all(&body)?;
            let mut answer = Vec::new();
            up.read_to_end(&mut answer)?;
            // The client may keep its connection: drop moto's "Connection: close".
            let text_end = answer
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map_or(answer.len(), |p| p + 4);
            let head_text = String::from_utf8_lossy(&answer[..text_end]).to_string();
            entry.status = head_text
                .get(9..12)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let kept: String = head_text
                .split("\r\n")
                .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
                .collect::<Vec<_>>()
                .join("\r\n");
            let body = &answer[text_end..];
            let truncate = hit && f.answer == FaultAnswer::Truncate && body.len() > 1;
            let body = if truncate {
                &body[..body.len() / 2]
            } else {
                body
            };
            entry.received = body.len() as u64;
            self.log
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(entry);
            client.write_all(kept.as_bytes())?;
            client.write_all(body)?;
            if truncate {
                return Ok(()); // closed short of its Content-Length
            }
        }
    }
}
