//! Binary min-heaps of indices, ordered by a comparison the caller supplies: the k-way merges
//! (`read::merge` over store files, `pipeline::import::sort` over spilled runs) keep their sources'
//! current records in the sources and heap only the source indices, which `std`'s
//! `BinaryHeap` cannot order (its `Ord` has no access to the sources).

/// Moves `heap[i]` down until neither child is `less` than it.
pub fn sift_down(heap: &mut [usize], mut i: usize, less: impl Fn(usize, usize) -> bool) {
    let n = heap.len();
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut best = i;
        if l < n && less(heap[l], heap[best]) {
            best = l;
        }
        if r < n && less(heap[r], heap[best]) {
            best = r;
        }
        if best == i {
            return;
        }
        heap.swap(i, best);
        i = best;
    }
}

/// Moves `heap[i]` up while it is `less` than its parent.
pub fn sift_up(heap: &mut [usize], mut i: usize, less: impl Fn(usize, usize) -> bool) {
    while i > 0 {
        let parent = (i - 1) / 2;
        if !less(heap[i], heap[parent]) {
            return;
        }
        heap.swap(i, parent);
        i = parent;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_and_pops_in_order_of_the_keys() {
        let keys = [5u32, 3, 9, 1, 7, 3, 0, 8, 2, 6];
        let less = |a: usize, b: usize| (keys[a], a) < (keys[b], b);
        let mut heap = Vec::new();
        for i in 0..keys.len() {
            heap.push(i);
            let last = heap.len() - 1;
            sift_up(&mut heap, last, less);
        }
        let mut out = Vec::new();
        while !heap.is_empty() {
            out.push(heap.swap_remove(0));
            sift_down(&mut heap, 0, less);
        }
        let mut want: Vec<usize> = (0..keys.len()).collect();
        want.sort_by_key(|&i| (keys[i], i));
        assert_eq!(out, want);
    }
}
