//! The collective algorithms, exactly as TensorFlow's CPU collective executor runs them so
//! that ferroflow and TensorFlow tasks can be members of one group: the ring all-reduce
//! (`RingReducer`), the ring all-gather (`RingGatherer`) and the tree broadcast
//! (`HierarchicalTreeBroadcaster`), with TensorFlow's chunking (64-byte aligned chunks,
//! empty chunks skipped) and buffer keys. A member only provides its chunks and takes
//! its peers' through a [`Link`]; every chunk moves once.

use ferroflow_core::{DataType, Status};
use ferroflow_kernels::collective::{divide_bytes, merge_bytes};
use ferroflow_kernels::MergeOp;
use tokio::sync::oneshot;

/// How a member exchanges chunks with the others of its group.
#[async_trait::async_trait]
pub(crate) trait Link: Send + Sync {
    /// Provides `bytes` under `key`; the receiver fires once a peer took them.
    fn provide(&self, key: String, bytes: Vec<u8>) -> Result<oneshot::Receiver<()>, Status>;
    /// Takes the `len` bytes that the member of rank `from` provided under `key`.
    async fn take(&self, from: usize, key: String, len: usize) -> Result<Vec<u8>, Status>;
}

/// TensorFlow's `EIGEN_MAX_ALIGN_BYTES` on x86-64 (its official wheels).
const ALIGN: usize = 64;

/// Elements per chunk when `total` elements of `elem` bytes go in `chunks` chunks, each
/// rounded up to a multiple of 64 bytes when `align` (TensorFlow's `AlignedChunkElts`).
pub(crate) fn chunk_elts(elem: usize, total: usize, chunks: usize, align: bool) -> usize {
    let base = total.div_ceil(chunks.max(1));
    if !align || ALIGN <= elem {
        return base;
    }
    let bytes = base * elem;
    // As TensorFlow: a chunk already a multiple of 64 bytes grows by 64 more.
    let diff = if bytes < ALIGN { ALIGN - bytes } else { ALIGN - bytes % ALIGN };
    base + diff / elem
}

/// The byte range of chunk `i`.
fn chunk_range(i: usize, per: usize, total: usize, elem: usize) -> std::ops::Range<usize> {
    let start = (i * per).min(total);
    let end = ((i + 1) * per).min(total);
    start * elem..end * elem
}

/// Subdivisions of a ring all-reduce with one device per task: one when
/// `max_subdivs_per_device` is -1, else as many as make a chunk at most 4 MiB, up to that
/// value (2 when it is not positive) (TensorFlow's `GenerateSubdivsInCollectiveParams`).
pub(crate) fn ring_subdivs(max_subdivs: i64, tensor_bytes: usize, group_size: usize) -> usize {
    if max_subdivs == -1 {
        return 1;
    }
    let limit = if max_subdivs > 0 { max_subdivs as usize } else { 2 };
    let mut s = 1;
    while s < limit && tensor_bytes / (group_size * s) > (4 << 20) {
        s += 1;
    }
    s
}

fn prev(r: usize, n: usize) -> usize {
    (r + n - 1) % n
}

/// The ring all-reduce: `data` (raw `dtype` elements) becomes every member's merge, divided
/// by the group size when `divide`. `exec` is TensorFlow's `group:instance:frame:iter`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn all_reduce(
    link: &dyn Link,
    exec: &str,
    (n, rank): (usize, usize),
    data: Vec<u8>,
    dtype: DataType,
    (merge, divide): (MergeOp, bool),
    subdivs: usize,
) -> Result<Vec<u8>, Status> {
    let elem = dtype.byte_size().unwrap_or(1);
    let total = data.len() / elem;
    let chunks = n * subdivs;
    let per = chunk_elts(elem, total, chunks, true);
    let mut fields = Vec::with_capacity(chunks);
    for c in 0..n {
        for s in 0..subdivs {
            let sc = c * subdivs + s;
            let range = chunk_range(sc, per, total, elem);
            fields.push((c, sc, data[range].to_vec()));
        }
    }
    let run = fields.into_iter().map(|(c, sc, mut chunk)| {
        let mut sends = Vec::new();
        async move {
            if chunk.is_empty() {
                return Ok((sc, chunk, sends));
            }
            let final_rank = prev(c, n);
            // Pass 0: chunk c starts at rank c and is merged along the ring.
            if c != rank {
                let got = link.take(prev(rank, n), format!("{exec}:0:{sc}:{}", prev(rank, n)), chunk.len()).await?;
                merge_bytes(dtype, merge, &mut chunk, &got)?;
            }
            if rank == final_rank {
                if divide {
                    divide_bytes(dtype, &mut chunk, n as i32)?;
                }
            } else {
                // Pass 1 brings the finished chunk back in its place: send this one whole.
                let len = chunk.len();
                sends.push(link.provide(format!("{exec}:0:{sc}:{rank}"), std::mem::take(&mut chunk))?);
                chunk = link.take(prev(rank, n), format!("{exec}:1:{sc}:{}", prev(rank, n)), len).await?;
            }
            // Pass 1: the finished chunk goes round.
            if rank != prev(final_rank, n) {
                sends.push(link.provide(format!("{exec}:1:{sc}:{rank}"), chunk.clone())?);
            }
            Ok::<_, Status>((sc, chunk, sends))
        }
    });
    concat_chunks(chunks, run).await
}

/// The ring all-gather: every member's `input` (of equal size) concatenated in rank order.
pub(crate) async fn all_gather(
    link: &dyn Link,
    exec: &str,
    (n, rank): (usize, usize),
    input: Vec<u8>,
) -> Result<Vec<u8>, Status> {
    let len = input.len();
    let run = (0..n).map(|c| {
        let own = (c == rank).then(|| input.clone());
        async move {
            let mut sends = Vec::new();
            if len == 0 {
                return Ok((c, Vec::new(), sends));
            }
            let chunk = match own {
                Some(b) => b,
                None => link.take(prev(rank, n), format!("{exec}:0:{c}:{}", prev(rank, n)), len).await?,
            };
            if rank != prev(c, n) {
                sends.push(link.provide(format!("{exec}:0:{c}:{rank}"), chunk.clone())?);
            }
            Ok::<_, Status>((c, chunk, sends))
        }
    });
    concat_chunks(n, run).await
}

/// Who rank `r` receives a broadcast from `source` from, in a group of `n` (TensorFlow's
/// binary tree; `None` for the source).
pub(crate) fn tree_parent(r: usize, source: usize, n: usize) -> Option<usize> {
    let _ = n;
    if r == source {
        None
    } else if source == 0 {
        Some((r - 1) / 2)
    } else {
        Some(if r / 2 >= 1 { r / 2 - 1 } else { source })
    }
}

/// Whom rank `r` forwards a broadcast from `source` to.
pub(crate) fn tree_children(r: usize, source: usize, n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    if source == 0 {
        out.extend([2 * r + 1, 2 * r + 2].into_iter().filter(|&c| c < n));
        return out;
    }
    if r == source {
        if n > 1 {
            out.push(0);
        }
        if n > 2 && source != 1 {
            out.push(1);
        }
    }
    out.extend([2 * (r + 1), 2 * (r + 1) + 1].into_iter().filter(|&c| c < n && c != source));
    out
}

/// The tree broadcast: the source's `data` to every member (`len` bytes).
pub(crate) async fn broadcast(
    link: &dyn Link,
    exec: &str,
    (n, rank, source): (usize, usize, usize),
    data: Option<Vec<u8>>,
    len: usize,
) -> Result<Vec<u8>, Status> {
    let data = match (tree_parent(rank, source, n), data) {
        (None, Some(d)) => d,
        (Some(p), _) => link.take(p, format!("{exec}:0:{p}:{rank}"), len).await?,
        (None, None) => return Err(Status::internal("the broadcast's source has no tensor")),
    };
    let mut taken = Vec::new();
    if len > 0 {
        for c in tree_children(rank, source, n) {
            taken.push(link.provide(format!("{exec}:0:{rank}:{c}"), data.clone())?);
        }
    }
    wait_taken(taken).await?;
    Ok(data)
}

/// Runs `count` chunks' futures together, each giving its index, its bytes and the sends
/// it left for peers; the chunks in index order, concatenated, once every send was taken.
async fn concat_chunks(
    count: usize,
    run: impl IntoIterator<Item = impl std::future::Future<Output = Result<Chunk, Status>>>,
) -> Result<Vec<u8>, Status> {
    let mut out = vec![Vec::new(); count];
    let mut taken = Vec::new();
    for r in futures_util::future::join_all(run).await {
        let (i, chunk, sends) = r?;
        out[i] = chunk;
        taken.extend(sends);
    }
    wait_taken(taken).await?;
    Ok(out.concat())
}

/// A chunk's index, bytes and the sends of it that peers are still to take.
type Chunk = (usize, Vec<u8>, Vec<oneshot::Receiver<()>>);

async fn wait_taken(taken: Vec<oneshot::Receiver<()>>) -> Result<(), Status> {
    for t in taken {
        t.await.map_err(|_| Status::cancelled("a collective's chunk was dropped before a peer took it"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::bufs::BufTable;
    use super::*;
    use std::sync::Arc;

    /// Members in one process sharing one table.
    struct Local(Arc<BufTable>);

    #[async_trait::async_trait]
    impl Link for Local {
        fn provide(&self, key: String, bytes: Vec<u8>) -> Result<oneshot::Receiver<()>, Status> {
            self.0.provide(1, &key, bytes)
        }
        async fn take(&self, _: usize, key: String, len: usize) -> Result<Vec<u8>, Status> {
            let b = self.0.take(1, &key)?.await.map_err(|_| Status::cancelled("dropped"))?;
            assert_eq!(b.len(), len, "{key}");
            Ok(b)
        }
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn back(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    #[test]
    fn chunking_as_tensorflow() {
        // Sizes seen on TensorFlow 2.21's wire: 40 floats over 2 -> 32 + 8, over 3 -> 16 + 16 + 8,
        // 64 over 2 -> 48 + 16 (an aligned chunk grows by 64 bytes), 10 halves over 2 -> 10.
        assert_eq!(chunk_elts(4, 40, 2, true), 32);
        assert_eq!(chunk_elts(4, 40, 3, true), 16);
        assert_eq!(chunk_elts(4, 6, 2, true), 16);
        assert_eq!(chunk_elts(4, 8, 4, true), 16);
        assert_eq!(chunk_elts(4, 64, 2, true), 48);
        assert_eq!(chunk_elts(4, 32, 2, true), 32);
        assert_eq!(chunk_elts(4, 48, 3, true), 32);
        assert_eq!(chunk_elts(8, 6, 2, true), 8);
        assert_eq!(chunk_elts(2, 10, 2, true), 32);
        // Subdivisions: 20 MiB over 2 members in 1, 2 (limit 0, 2 or -2) or 3 (limit 3).
        assert_eq!(ring_subdivs(-1, 20 << 20, 2), 1);
        assert_eq!(ring_subdivs(1, 20 << 20, 2), 1);
        assert_eq!(ring_subdivs(0, 20 << 20, 2), 2);
        assert_eq!(ring_subdivs(-2, 20 << 20, 2), 2);
        assert_eq!(ring_subdivs(3, 20 << 20, 2), 3);
        assert_eq!(ring_subdivs(3, 30 << 20, 3), 3);
        assert_eq!(ring_subdivs(0, 160, 2), 1);
    }

    #[test]
    fn broadcast_tree_as_tensorflow() {
        // Keys seen on TensorFlow 2.21's wire: N=3 s=1: 1->0, 0->2; N=4 s=2: 2->0, 2->1, 0->3.
        assert_eq!(tree_children(1, 1, 3), vec![0]);
        assert_eq!(tree_children(0, 1, 3), vec![2]);
        assert_eq!(tree_parent(2, 1, 3), Some(0));
        assert_eq!(tree_children(2, 2, 4), vec![0, 1]);
        assert_eq!(tree_children(0, 2, 4), vec![3]);
        assert_eq!(tree_parent(3, 2, 4), Some(0));
        assert_eq!(tree_parent(1, 2, 4), Some(2));
        assert_eq!(tree_children(0, 0, 5), vec![1, 2]);
        assert_eq!(tree_parent(4, 0, 5), Some(1));
        // Every member but the source receives exactly once.
        for n in 1..12 {
            for s in 0..n {
                let mut got = vec![0; n];
                for r in 0..n {
                    for c in tree_children(r, s, n) {
                        assert_eq!(tree_parent(c, s, n), Some(r), "n={n} s={s} r={r} c={c}");
                        got[c] += 1;
                    }
                }
                for (r, g) in got.iter().enumerate() {
                    assert_eq!(*g, usize::from(r != s), "n={n} s={s} r={r}");
                }
            }
        }
    }

    #[tokio::test]
    async fn reduce_gather_broadcast_in_one_process() {
        for n in [2usize, 3, 4] {
            for subdivs in [1, 2] {
                let table = Arc::new(BufTable::default());
                let total = 37;
                let inputs: Vec<Vec<f32>> =
                    (0..n).map(|r| (0..total).map(|i| (i * (r + 1)) as f32).collect()).collect();
                let want: Vec<f32> =
                    (0..total).map(|i| (0..n).map(|r| (i * (r + 1)) as f32).sum::<f32>() / n as f32).collect();
                let runs = (0..n).map(|r| {
                    let link = Local(table.clone());
                    let data = f32s(&inputs[r]);
                    async move {
                        all_reduce(&link, "1:1:0:0", (n, r), data, DataType::Float, (MergeOp::Add, true), subdivs).await
                    }
                });
                for out in futures_util::future::join_all(runs).await {
                    assert_eq!(back(&out.unwrap()), want, "n={n}");
                }
                let runs = (0..n).map(|r| {
                    let link = Local(table.clone());
                    async move { all_gather(&link, "1:2:0:0", (n, r), f32s(&[r as f32, -(r as f32)])).await }
                });
                let want: Vec<f32> = (0..n).flat_map(|r| [r as f32, -(r as f32)]).collect();
                for out in futures_util::future::join_all(runs).await {
                    assert_eq!(back(&out.unwrap()), want);
                }
                let runs = (0..n).map(|r| {
                    let link = Local(table.clone());
                    let src = n - 1;
                    let data = (r == src).then(|| f32s(&[7.0, 8.0]));
                    async move { broadcast(&link, "1:3:0:0", (n, r, src), data, 8).await }
                });
                for out in futures_util::future::join_all(runs).await {
                    assert_eq!(back(&out.unwrap()), [7.0, 8.0]);
                }
                assert_eq!(table.pending_steps(), 0);
            }
        }
    }
}
