//! The first bytes of an accepted connection: until a client has sent the HTTP/2 preface
//! and the HEADERS frame of its first request, the connection runs under a deadline
//! ([`crate::access::HANDSHAKE_TIMEOUT`]), so a peer that connects and says nothing does
//! not hold a connection slot.

use std::pin::Pin;
use std::time::Duration;

/// Watches the first bytes of a connection for the HTTP/2 preface and a HEADERS frame.
pub(crate) struct Handshake {
    pub(crate) deadline: Pin<Box<tokio::time::Sleep>>,
    /// Bytes of the stream seen so far (the preface, then frame headers).
    seen: usize,
    /// Stream offset of the next frame header and the bytes of it read so far.
    next_frame: usize,
    header: [u8; 9],
    filled: usize,
}

/// The HTTP/2 client connection preface.
const PREFACE_LEN: usize = 24;
const FRAME_HEADERS: u8 = 0x1;

impl Handshake {
    pub(crate) fn new(timeout: Duration) -> Handshake {
        Handshake {
            deadline: Box::pin(tokio::time::sleep(timeout)),
            seen: 0,
            next_frame: PREFACE_LEN,
            header: [0; 9],
            filled: 0,
        }
    }

    /// Feeds bytes read from the connection; true once a HEADERS frame has begun.
    pub(crate) fn feed(&mut self, mut data: &[u8]) -> bool {
        while !data.is_empty() {
            if self.seen < self.next_frame {
                let skip = (self.next_frame - self.seen).min(data.len());
                self.seen += skip;
                data = &data[skip..];
                continue;
            }
            let take = (9 - self.filled).min(data.len());
            self.header[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            self.seen += take;
            data = &data[take..];
            if self.filled == 9 {
                if self.header[3] == FRAME_HEADERS {
                    return true;
                }
                let len = u32::from_be_bytes([0, self.header[0], self.header[1], self.header[2]]) as usize;
                self.next_frame = self.seen + len;
                self.filled = 0;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, len: usize) -> Vec<u8> {
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, 0, 0, 0, 0, 1];
        f.extend(std::iter::repeat_n(0u8, len));
        f
    }

    #[tokio::test]
    async fn the_handshake_ends_at_the_first_headers_frame() {
        let mut stream = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        stream.extend(frame(0x4, 6)); // SETTINGS
        stream.extend(frame(0x8, 4)); // WINDOW_UPDATE
        let before_headers = stream.len();
        stream.extend(frame(FRAME_HEADERS, 20));
        // Whole, and byte by byte: only the HEADERS frame's header completes it.
        let mut h = Handshake::new(Duration::from_secs(1));
        assert!(h.feed(&stream));
        let mut h = Handshake::new(Duration::from_secs(1));
        for (i, b) in stream.iter().enumerate() {
            let done = h.feed(std::slice::from_ref(b));
            assert_eq!(done, i == before_headers + 8, "byte {i}");
            if done {
                break;
            }
        }
        // A payload byte equal to the HEADERS type is not mistaken for a frame header.
        let mut h = Handshake::new(Duration::from_secs(1));
        let mut s = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        let mut settings = frame(0x4, 12);
        settings[9 + 3] = FRAME_HEADERS;
        s.extend(settings);
        assert!(!h.feed(&s));
    }
}
