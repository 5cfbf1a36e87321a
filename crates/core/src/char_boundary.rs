//! Cutting text to a number of bytes without splitting a character.

/// The largest character boundary of `s` at or before byte `i` (`s.len()` when `i` is past
/// the end): where `s` can be cut to at most `i` bytes. As `str::floor_char_boundary`,
/// which is newer than this crate's minimum Rust.
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut cut = i;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_before_a_split_character() {
        let s = "aé€"; // 1 + 2 + 3 bytes
        let cuts: Vec<usize> = (0..8).map(|i| floor_char_boundary(s, i)).collect();
        assert_eq!(cuts, [0, 1, 1, 3, 3, 3, 6, 6]);
    }
}
