//! TensorFlow's `Hash64` (MurmurHash64A with TensorFlow's seed) and `Hash64Combine`: the
//! executor identifies a loop frame instance by combining its parent's id, the parent's
//! iteration and the hash of the frame's name, and that number is part of the rendezvous
//! key of every tensor sent inside the loop, so it must be TensorFlow's exactly.

const SEED: u64 = 0x00DE_CAFC_AFFE;
const M: u64 = 0xc6a4_a793_5bd1_e995;
const R: u32 = 47;

/// TensorFlow's `Hash64(data, n)`.
pub fn tf_hash64(data: &[u8]) -> u64 {
    let mut h = SEED ^ (data.len() as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= (b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// TensorFlow's `Hash64Combine`.
pub fn tf_hash64_combine(a: u64, b: u64) -> u64 {
    a ^ (b.wrapping_add(0x9e37_79b9_7f4a_7800).wrapping_add(a << 10).wrapping_add(a >> 4))
}

/// The id TensorFlow's executor gives the instance of loop frame `frame_name` entered in
/// iteration `iter` of the frame instance `parent` (the root frame's id is 0).
pub fn child_frame_id(parent: u64, iter: u64, frame_name: &str) -> u64 {
    tf_hash64_combine(parent, tf_hash64_combine(iter, tf_hash64(frame_name.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TensorFlow 2.21's `StringToHashBucket` (which buckets `Hash64`) with 2^63-1 and
    /// 2^31-1 buckets.
    #[test]
    fn equals_tensorflow() {
        let cases: [(&str, u64, u64); 6] = [
            ("", 105434511174508092, 478987903),
            ("a", 2996632905371535868, 2048337276),
            ("_root;0;while/while_context", 3057273851115055475, 1772676657),
            ("_root;0;while/while_context;3;while/while_1/while_context", 7923919979714322029, 2137847017),
            ("abcdefgh", 3429851175771700306, 1132890948),
            ("abcdefghi", 6766191100966087061, 1531631488),
        ];
        for (s, a, b) in cases {
            let h = tf_hash64(s.as_bytes());
            assert_eq!((h % ((1u64 << 63) - 1), h % ((1u64 << 31) - 1)), (a, b), "{s:?}");
        }
    }

    #[test]
    fn hash_covers_every_tail_length_and_differs() {
        let s = b"_root;0;while/while_context";
        let hs: Vec<u64> = (0..=s.len()).map(|n| tf_hash64(&s[..n])).collect();
        let mut sorted = hs.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), hs.len(), "every prefix hashes differently");
        assert_eq!(tf_hash64(s), tf_hash64(s), "deterministic");
        let id = child_frame_id(0, 0, "while/while_context");
        assert_ne!(child_frame_id(0, 1, "while/while_context"), id);
        assert_ne!(child_frame_id(id, 0, "while/while_context"), id);
    }
}
