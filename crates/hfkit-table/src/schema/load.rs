//! Reading a schema: a file or text, TOML or an HBase shell `create` statement, of one table or
//! of several `[[table]]` sections, each into a [`ParsedSchema`]. The TOML form's meaning is
//! `toml_form`'s, the shell's `crate::shell`'s. Prose: `formats/schema.md` §"Sections",
//! §"Several tables from one input".

use std::path::Path;

use super::mapping::ParsedSchema;
use super::table::TableSchema;
use crate::error::SchemaError;

impl TableSchema {
    /// Parses a TOML schema file (see `formats/schema.md`). Relative `[splits] file` paths are
    /// resolved against the file's directory.
    pub fn from_toml_file(path: &Path) -> Result<ParsedSchema, SchemaError> {
        let text = std::fs::read_to_string(path).map_err(|source| SchemaError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().map(Path::to_path_buf);
        TableSchema::from_toml_str(&text, &path.display().to_string(), base.as_deref())
    }

    /// Parses TOML schema text. `source` names it in errors; `base_dir` resolves relative
    /// splits-file paths (kept as written when `None`).
    pub fn from_toml_str(
        text: &str,
        source: &str,
        base_dir: Option<&Path>,
    ) -> Result<ParsedSchema, SchemaError> {
        super::toml_form::read(text, source, base_dir)
    }

    /// Parses TOML schema text of one or several tables: one per `[[table]]` section in
    /// document order, or the one `[table]` (`formats/schema.md` §"Several tables from one
    /// input").
    pub fn targets_from_toml_str(
        text: &str,
        source: &str,
        base_dir: Option<&Path>,
    ) -> Result<Vec<ParsedSchema>, SchemaError> {
        super::toml_form::read_targets(text, source, base_dir)
    }

    /// Parses a schema file of one or several tables (as [`TableSchema::from_file`], and a
    /// TOML file's `[[table]]` sections each as a schema, in document order).
    pub fn targets_from_file(path: &Path) -> Result<Vec<ParsedSchema>, SchemaError> {
        let text = std::fs::read_to_string(path).map_err(|source| SchemaError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if is_shell(&text) {
            return crate::shell::parse_create_from(&text, &path.display().to_string())
                .map(|p| vec![p]);
        }
        let base = path.parent().map(Path::to_path_buf);
        TableSchema::targets_from_toml_str(&text, &path.display().to_string(), base.as_deref())
    }

    /// Parses an HBase shell `create` statement (see [`crate::shell`]).
    pub fn from_shell(text: &str) -> Result<ParsedSchema, SchemaError> {
        crate::shell::parse_create(text)
    }

    /// Reads a schema file in either form: text whose first word is `create` is a shell
    /// statement, anything else TOML.
    pub fn from_file(path: &Path) -> Result<ParsedSchema, SchemaError> {
        let text = std::fs::read_to_string(path).map_err(|source| SchemaError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if is_shell(&text) {
            crate::shell::parse_create_from(&text, &path.display().to_string())
        } else {
            let base = path.parent().map(Path::to_path_buf);
            TableSchema::from_toml_str(&text, &path.display().to_string(), base.as_deref())
        }
    }
}

/// Whether schema text is an HBase shell `create` statement (its first word), not TOML.
fn is_shell(text: &str) -> bool {
    let first_word = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .and_then(|l| l.split(|c: char| !c.is_ascii_alphanumeric()).next());
    first_word == Some("create")
}
