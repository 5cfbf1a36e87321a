//! TensorFlow status codes and the error type used across ferroflow.

use std::fmt;

use crate::status_payload::Payloads;
use crate::wire_enum::wire_enum;

wire_enum! {
    /// TensorFlow's canonical error codes (`tensorflow.error.Code`), equal to gRPC's.
    pub enum Code {
        Ok = 0 => "OK",
        Cancelled = 1 => "CANCELLED",
        Unknown = 2 => "UNKNOWN",
        InvalidArgument = 3 => "INVALID_ARGUMENT",
        DeadlineExceeded = 4 => "DEADLINE_EXCEEDED",
        NotFound = 5 => "NOT_FOUND",
        AlreadyExists = 6 => "ALREADY_EXISTS",
        PermissionDenied = 7 => "PERMISSION_DENIED",
        ResourceExhausted = 8 => "RESOURCE_EXHAUSTED",
        FailedPrecondition = 9 => "FAILED_PRECONDITION",
        Aborted = 10 => "ABORTED",
        OutOfRange = 11 => "OUT_OF_RANGE",
        Unimplemented = 12 => "UNIMPLEMENTED",
        Internal = 13 => "INTERNAL",
        Unavailable = 14 => "UNAVAILABLE",
        DataLoss = 15 => "DATA_LOSS",
        Unauthenticated = 16 => "UNAUTHENTICATED",
    }
    /// TensorFlow's spelling of the code, e.g. `INVALID_ARGUMENT`.
    fn name;
}

impl Code {
    /// Maps a wire value to a code; unknown values become [`Code::Unknown`].
    pub fn from_i32(v: i32) -> Code {
        Code::from_wire(v).unwrap_or(Code::Unknown)
    }
}

/// An error with a TensorFlow status code and a message naming what went wrong.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub struct Status {
    /// The TensorFlow error code.
    pub code: Code,
    /// Human-readable message: names the node, device, task or tensor involved.
    pub message: String,
    /// Structured fields that survive the wire (TensorFlow's status payloads): the node,
    /// the reason, TensorFlow's markers ([`crate::status_payload`]).
    pub payloads: Payloads,
}

/// Result with a [`Status`] error.
pub type Result<T, E = Status> = std::result::Result<T, E>;

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

macro_rules! ctor {
    ($($fn_name:ident => $code:ident),* $(,)?) => {
        $(
            #[doc = concat!("A `", stringify!($code), "` status with the given message.")]
            pub fn $fn_name(msg: impl Into<String>) -> Status {
                Status { code: Code::$code, message: msg.into(), payloads: Payloads::default() }
            }
        )*
    };
}

impl Status {
    /// A status with the given code and message.
    pub fn new(code: Code, msg: impl Into<String>) -> Status {
        Status { code, message: msg.into(), payloads: Payloads::default() }
    }

    ctor! {
        cancelled => Cancelled,
        unknown => Unknown,
        invalid_argument => InvalidArgument,
        deadline_exceeded => DeadlineExceeded,
        not_found => NotFound,
        already_exists => AlreadyExists,
        resource_exhausted => ResourceExhausted,
        failed_precondition => FailedPrecondition,
        aborted => Aborted,
        out_of_range => OutOfRange,
        unimplemented => Unimplemented,
        internal => Internal,
        unavailable => Unavailable,
        data_loss => DataLoss,
    }

    /// Prefixes the message with context, keeping the code.
    pub fn context(mut self, ctx: impl fmt::Display) -> Status {
        self.message = format!("{ctx}: {}", self.message);
        self
    }

    /// The status with its message cut to at most [`MAX_REMOTE_MESSAGE`] bytes (the start
    /// kept, which names the node and what went wrong, then how much was cut): what a
    /// remote peer receives. A gRPC status travels in a header, and clients refuse headers
    /// of more than 8–16 KiB, so a long text would lose the reason altogether.
    pub fn capped(mut self) -> Status {
        let len = self.message.len();
        if len > MAX_REMOTE_MESSAGE {
            let mut cut = MAX_REMOTE_MESSAGE - 64;
            while !self.message.is_char_boundary(cut) {
                cut -= 1;
            }
            self.message.truncate(cut);
            self.message.push_str(&format!(" ... ({} more bytes of this message cut)", len - cut));
        }
        self
    }
}

/// The most bytes of an error message sent to a remote peer ([`Status::capped`]).
pub const MAX_REMOTE_MESSAGE: usize = 2048;

impl From<std::io::Error> for Status {
    fn from(e: std::io::Error) -> Status {
        use std::io::ErrorKind::*;
        let code = match e.kind() {
            NotFound => Code::NotFound,
            PermissionDenied => Code::PermissionDenied,
            AlreadyExists => Code::AlreadyExists,
            InvalidInput | InvalidData => Code::InvalidArgument,
            TimedOut => Code::DeadlineExceeded,
            UnexpectedEof => Code::OutOfRange,
            _ => Code::Unknown,
        };
        Status::new(code, e.to_string())
    }
}

impl From<prost::DecodeError> for Status {
    fn from(e: prost::DecodeError) -> Status {
        Status::invalid_argument(format!("malformed protocol buffer: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for v in 0..=16 {
            assert_eq!(Code::from_i32(v) as i32, v);
        }
        assert_eq!(Code::from_i32(99), Code::Unknown);
    }

    #[test]
    fn display_has_code_name() {
        let s = Status::not_found("variable w").context("node Read");
        assert_eq!(s.to_string(), "NOT_FOUND: node Read: variable w");
    }

    #[test]
    fn remote_messages_are_capped_on_a_char_boundary() {
        let short = Status::internal("short");
        assert_eq!(short.clone().capped(), short);
        let long = Status::invalid_argument(format!("node 'pool': ksize {}", "é1, ".repeat(100_000)));
        let c = long.capped();
        assert_eq!(c.code, Code::InvalidArgument);
        assert!(c.message.len() <= MAX_REMOTE_MESSAGE, "{}", c.message.len());
        assert!(c.message.starts_with("node 'pool': ksize é1"), "{}", &c.message[..40]);
        assert!(c.message.ends_with("more bytes of this message cut)"), "{}", c.message);
    }
}
