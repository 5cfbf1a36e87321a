//! Protobuf text format → a generic tree of fields (names and scalar or message values).
//! Accepts what protobuf's TextFormat accepts for the messages ferroflow reads: `:` optional
//! before `{`, `<…>` as braces, `[a, b]` lists, `#` comments, `,`/`;` separators, single or
//! double quoted strings with C escapes (adjacent strings concatenate).

use ferroflow_core::Status;

/// Line and column (1-based) of a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    /// Line.
    pub line: usize,
    /// Column.
    pub col: usize,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A scalar token.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// An identifier (`true`, `DT_FLOAT`, `inf`).
    Ident(String),
    /// A number as written (`-1`, `0x1f`, `2.5e-3`, `1f`).
    Num(String),
    /// A string with escapes decoded.
    Str(Vec<u8>),
}

/// A field value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// A scalar.
    Scalar(Scalar),
    /// A nested message.
    Msg(Vec<Field>),
}

/// One `name: value` or `name { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Field name.
    pub name: String,
    /// Value.
    pub val: Val,
    /// Where the field starts.
    pub pos: Pos,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(String),
    Str(Vec<u8>),
    Punct(u8),
}

const MAX_DEPTH: usize = 100;

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
    line_start: usize,
    peeked: Option<(Tok, Pos)>,
}

fn err(pos: Pos, msg: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("text proto {pos}: {msg}"))
}

impl<'a> Lexer<'a> {
    fn pos(&self) -> Pos {
        Pos { line: self.line, col: self.i - self.line_start + 1 }
    }

    fn skip_space(&mut self) {
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    self.line_start = self.i;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.i += 1,
                b'#' => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn word(&mut self) -> String {
        let start = self.i;
        let mut prev = 0u8;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            let exp_sign = (c == b'+' || c == b'-') && (prev == b'e' || prev == b'E');
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || exp_sign {
                prev = c;
                self.i += 1;
            } else {
                break;
            }
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn string(&mut self, quote: u8, pos: Pos) -> Result<Vec<u8>, Status> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else { return Err(err(pos, "unterminated string")) };
            self.i += 1;
            match c {
                b'\n' => return Err(err(pos, "newline in string")),
                c if c == quote => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else { return Err(err(pos, "unterminated string")) };
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'a' => out.push(7),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'v' => out.push(11),
                        b'\\' | b'\'' | b'"' | b'?' => out.push(e),
                        b'0'..=b'7' => {
                            let mut v = (e - b'0') as u32;
                            for _ in 0..2 {
                                match self.s.get(self.i) {
                                    Some(&d @ b'0'..=b'7') => {
                                        v = v * 8 + (d - b'0') as u32;
                                        self.i += 1;
                                    }
                                    _ => break,
                                }
                            }
                            if v > 255 {
                                return Err(err(pos, "octal escape out of range"));
                            }
                            out.push(v as u8);
                        }
                        b'x' | b'X' => {
                            let mut v = 0u32;
                            let mut n = 0;
                            while n < 2 {
                                match self.s.get(self.i).and_then(|d| (*d as char).to_digit(16)) {
                                    Some(d) => {
                                        v = v * 16 + d;
                                        self.i += 1;
                                        n += 1;
                                    }
                                    None => break,
                                }
                            }
                            if n == 0 {
                                return Err(err(pos, "\\x escape without hex digits"));
                            }
                            out.push(v as u8);
                        }
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4).ok_or_else(|| err(pos, "short \\u escape"))?;
                            let v = std::str::from_utf8(hex)
                                .ok()
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .and_then(char::from_u32)
                                .ok_or_else(|| err(pos, "bad \\u escape"))?;
                            self.i += 4;
                            let mut b = [0u8; 4];
                            out.extend_from_slice(v.encode_utf8(&mut b).as_bytes());
                        }
                        other => return Err(err(pos, format!("unknown escape '\\{}'", other as char))),
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn next_raw(&mut self) -> Result<Option<(Tok, Pos)>, Status> {
        self.skip_space();
        let pos = self.pos();
        let Some(&c) = self.s.get(self.i) else { return Ok(None) };
        let tok = match c {
            b'{' | b'}' | b'<' | b'>' | b':' | b'[' | b']' | b',' | b';' => {
                self.i += 1;
                Tok::Punct(c)
            }
            b'"' | b'\'' => Tok::Str(self.string(c, pos)?),
            b'-' => {
                self.i += 1;
                self.skip_space();
                let w = self.word();
                if w.is_empty() {
                    return Err(err(pos, "'-' must be followed by a number"));
                }
                if w.as_bytes()[0].is_ascii_digit() || w.starts_with('.') {
                    Tok::Num(format!("-{w}"))
                } else {
                    Tok::Ident(format!("-{w}"))
                }
            }
            c if c.is_ascii_digit() || c == b'.' => Tok::Num(self.word()),
            c if c.is_ascii_alphabetic() || c == b'_' => Tok::Ident(self.word()),
            c => return Err(err(pos, format!("unexpected character '{}'", c as char))),
        };
        Ok(Some((tok, pos)))
    }

    fn next(&mut self) -> Result<Option<(Tok, Pos)>, Status> {
        match self.peeked.take() {
            Some(t) => Ok(Some(t)),
            None => self.next_raw(),
        }
    }

    fn peek(&mut self) -> Result<Option<&(Tok, Pos)>, Status> {
        if self.peeked.is_none() {
            self.peeked = self.next_raw()?;
        }
        Ok(self.peeked.as_ref())
    }

    fn peek_is(&mut self, p: u8) -> Result<bool, Status> {
        Ok(matches!(self.peek()?, Some((Tok::Punct(c), _)) if *c == p))
    }
}

/// Parses text-format fields up to the end of input.
pub fn parse(text: &str) -> Result<Vec<Field>, Status> {
    let mut lx = Lexer { s: text.as_bytes(), i: 0, line: 1, line_start: 0, peeked: None };
    let fields = message(&mut lx, None, 0)?;
    Ok(fields)
}

fn message(lx: &mut Lexer, close: Option<u8>, depth: usize) -> Result<Vec<Field>, Status> {
    if depth > MAX_DEPTH {
        return Err(err(lx.pos(), format!("messages nested deeper than {MAX_DEPTH}")));
    }
    let mut out = Vec::new();
    loop {
        let Some((tok, pos)) = lx.next()? else {
            return match close {
                None => Ok(out),
                Some(c) => Err(err(lx.pos(), format!("missing '{}' at end of input", c as char))),
            };
        };
        let name = match tok {
            Tok::Punct(c) if Some(c) == close => return Ok(out),
            Tok::Punct(b'[') => return Err(err(pos, "extension and Any fields are not supported")),
            Tok::Ident(n) => n,
            t => return Err(err(pos, format!("expected a field name, got {t:?}"))),
        };
        let colon = lx.peek_is(b':')?;
        if colon {
            lx.next()?;
        }
        if lx.peek_is(b'[')? {
            lx.next()?;
            if lx.peek_is(b']')? {
                lx.next()?;
            } else {
                loop {
                    let val = value(lx, colon, depth)?;
                    out.push(Field { name: name.clone(), val, pos });
                    match lx.next()? {
                        Some((Tok::Punct(b','), _)) => continue,
                        Some((Tok::Punct(b']'), _)) => break,
                        _ => return Err(err(pos, format!("expected ',' or ']' in the list of '{name}'"))),
                    }
                }
            }
        } else {
            let val = value(lx, colon, depth)?;
            out.push(Field { name, val, pos });
        }
        if lx.peek_is(b',')? || lx.peek_is(b';')? {
            lx.next()?;
        }
    }
}

fn value(lx: &mut Lexer, colon: bool, depth: usize) -> Result<Val, Status> {
    let Some((tok, pos)) = lx.next()? else { return Err(err(lx.pos(), "unexpected end of input")) };
    match tok {
        Tok::Punct(b'{') => Ok(Val::Msg(message(lx, Some(b'}'), depth + 1)?)),
        Tok::Punct(b'<') => Ok(Val::Msg(message(lx, Some(b'>'), depth + 1)?)),
        _ if !colon => Err(err(pos, "expected ':' before a scalar value")),
        Tok::Str(mut s) => {
            while let Some((Tok::Str(_), _)) = lx.peek()? {
                if let Some((Tok::Str(more), _)) = lx.next()? {
                    s.extend(more);
                }
            }
            Ok(Val::Scalar(Scalar::Str(s)))
        }
        Tok::Num(n) => Ok(Val::Scalar(Scalar::Num(n))),
        Tok::Ident(n) => Ok(Val::Scalar(Scalar::Ident(n))),
        Tok::Punct(c) => Err(err(pos, format!("unexpected '{}'", c as char))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_structure() {
        let f = parse("a: 1 # c\n b { c: 'x\\101\\x42' \"y\" } d < e: -inf >, l: [1, 2]; m: []").unwrap();
        assert_eq!(f.len(), 5);
        assert_eq!(f[0].val, Val::Scalar(Scalar::Num("1".into())));
        let Val::Msg(b) = &f[1].val else { panic!() };
        assert_eq!(b[0].val, Val::Scalar(Scalar::Str(b"xABy".to_vec())));
        assert_eq!(f[1].pos, Pos { line: 2, col: 2 });
        let Val::Msg(d) = &f[2].val else { panic!() };
        assert_eq!(d[0].val, Val::Scalar(Scalar::Ident("-inf".into())));
        assert_eq!(f[4].name, "l");
        for bad in ["a: 'x", "a {", "a: }", "a 1", "[ext] {}", "a: \"\\q\"", "a: -"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = "a {".repeat(200) + &"}".repeat(200);
        assert!(parse(&deep).is_err());
    }
}
