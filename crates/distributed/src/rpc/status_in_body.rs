//! TensorFlow's `store_errors_in_response_body` rule, once for RunStep and RunGraph: a
//! caller that sets it gets a failed call as gRPC OK with the status in the response's
//! `status_code` and `status_error_message` (TensorFlow's clients set it for RunStep); a
//! reply read back with a non-zero code is that error. The status's payloads travel in
//! ferroflow's `status_payloads` field beside them (TensorFlow's peers skip it).

use ferroflow_core::proto::{RunGraphResponse, RunStepResponse};
use ferroflow_core::{Code, Status};

/// A response that can carry a status in its body.
pub(crate) trait StatusInBody: Default + Sized {
    /// The body's `(status_code, status_error_message, status_payloads)` fields.
    fn status_fields(&mut self) -> (&mut i32, &mut String, &mut Vec<u8>);

    /// A response that carries `e` (its message capped) and nothing else.
    fn from_status(e: Status) -> Self {
        let e = e.capped();
        let mut r = Self::default();
        let (code, message, payloads) = r.status_fields();
        *code = e.code as i32;
        *payloads = e.payloads.encode();
        *message = e.message;
        r
    }

    /// The response, or the error its body carries.
    fn into_result(mut self) -> Result<Self, Status> {
        let (code, message, payloads) = self.status_fields();
        if *code == 0 {
            return Ok(self);
        }
        let mut e = Status::new(Code::from_i32(*code), std::mem::take(message));
        if !payloads.is_empty() {
            e.payloads = ferroflow_core::status_payload::Payloads::decode(payloads);
        }
        Err(e)
    }

    /// `r`, or its error as a reply carrying it when the caller asked for that.
    fn or_in_body(r: Result<Self, Status>, in_body: bool) -> Result<Self, Status> {
        match r {
            Err(e) if in_body => Ok(Self::from_status(e)),
            r => r,
        }
    }
}

/// `resp` encoded by `encode` for the raw HTTP/2 path; an error (the call's, or one
/// encoding the reply) goes in the body of an empty reply when the caller asked for that.
pub(crate) fn encode_or_in_body<R: StatusInBody>(
    resp: Result<R, Status>,
    in_body: bool,
    encode: impl Fn(R) -> Result<Vec<bytes::Bytes>, Status>,
) -> Result<Vec<bytes::Bytes>, Status> {
    match resp.and_then(&encode) {
        Err(e) if in_body => encode(R::from_status(e)),
        r => r,
    }
}

impl StatusInBody for RunStepResponse {
    fn status_fields(&mut self) -> (&mut i32, &mut String, &mut Vec<u8>) {
        (&mut self.status_code, &mut self.status_error_message, &mut self.status_payloads)
    }
}

impl StatusInBody for RunGraphResponse {
    fn status_fields(&mut self) -> (&mut i32, &mut String, &mut Vec<u8>) {
        (&mut self.status_code, &mut self.status_error_message, &mut self.status_payloads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_goes_into_the_body_and_comes_back_out() {
        let r = RunStepResponse::from_status(Status::not_found("no node 'x'"));
        assert_eq!((r.status_code, r.status_error_message.as_str()), (Code::NotFound as i32, "no node 'x'"));
        let e = r.into_result().unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (Code::NotFound, "no node 'x'"));
        let ok = RunGraphResponse { status_error_message: "ignored".into(), ..Default::default() };
        assert!(ok.into_result().is_ok(), "code 0 is success");
        let e = RunGraphResponse::from_status(Status::aborted("restarted")).into_result().unwrap_err();
        assert_eq!(e.code, Code::Aborted);
        // Payloads (the node, TensorFlow's markers) ride beside the code and message.
        let st = Status::deadline_exceeded("timed out").with_node("sync/token").possibly_restarted();
        let e = RunStepResponse::from_status(st.clone()).into_result().unwrap_err();
        assert_eq!(e, st);
    }
}
