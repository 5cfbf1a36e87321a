//! A decoder of `tf.train.Example` protos (protobuf wire format, read directly): the
//! features map of bytes, float and int64 lists. Malformed input is an error, never a panic.

use std::collections::HashMap;

/// One feature's values.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Feature {
    Bytes(Vec<Vec<u8>>),
    Float(Vec<f32>),
    Int64(Vec<i64>),
    /// A feature with no list set.
    Empty,
}

impl Feature {
    /// TensorFlow's name of the list's type.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Feature::Bytes(_) => "string",
            Feature::Float(_) => "float",
            Feature::Int64(_) => "int64",
            Feature::Empty => "none",
        }
    }
    /// The number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Feature::Bytes(v) => v.len(),
            Feature::Float(v) => v.len(),
            Feature::Int64(v) => v.len(),
            Feature::Empty => 0,
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

const BAD: &str = "Could not parse example input";

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, at: 0 }
    }
    fn done(&self) -> bool {
        self.at >= self.b.len()
    }
    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.at).ok_or(BAD)?;
            self.at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(BAD.into())
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len()).ok_or(BAD)?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = usize::try_from(self.varint()?).map_err(|_| BAD.to_string())?;
        self.take(n)
    }
    /// The next (field number, wire type).
    fn tag(&mut self) -> Result<(u64, u8), String> {
        let t = self.varint()?;
        Ok((t >> 3, (t & 7) as u8))
    }
    fn skip(&mut self, wire: u8) -> Result<(), String> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.take(8).map(|_| ()),
            2 => self.bytes().map(|_| ()),
            5 => self.take(4).map(|_| ()),
            _ => Err(BAD.into()),
        }
    }
    /// The payload of the next length-delimited field 1 (the others skipped); `None` at the end.
    fn next_field_1(&mut self) -> Result<Option<&'a [u8]>, String> {
        while !self.done() {
            match self.tag()? {
                (1, 2) => return self.bytes().map(Some),
                (_, w) => self.skip(w)?,
            }
        }
        Ok(None)
    }
}

fn parse_feature(b: &[u8]) -> Result<Feature, String> {
    let mut r = Reader::new(b);
    let mut f = Feature::Empty;
    while !r.done() {
        let (field, wire) = r.tag()?;
        if wire != 2 || !(1..=3).contains(&field) {
            r.skip(wire)?;
            continue;
        }
        let mut list = Reader::new(r.bytes()?);
        f = match field {
            1 => {
                let mut v = Vec::new();
                while !list.done() {
                    let (k, w) = list.tag()?;
                    if k == 1 && w == 2 {
                        v.push(list.bytes()?.to_vec());
                    } else {
                        list.skip(w)?;
                    }
                }
                Feature::Bytes(v)
            }
            2 => {
                let mut v = Vec::new();
                while !list.done() {
                    match list.tag()? {
                        (1, 2) => {
                            let p = list.bytes()?;
                            if p.len() % 4 != 0 {
                                return Err(BAD.into());
                            }
                            v.extend(p.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
                        }
                        (1, 5) => {
                            let c = list.take(4)?;
                            v.push(f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                        }
                        (_, w) => list.skip(w)?,
                    }
                }
                Feature::Float(v)
            }
            _ => {
                let mut v = Vec::new();
                while !list.done() {
                    match list.tag()? {
                        (1, 2) => {
                            let mut p = Reader::new(list.bytes()?);
                            while !p.done() {
                                v.push(p.varint()? as i64);
                            }
                        }
                        (1, 0) => v.push(list.varint()? as i64),
                        (_, w) => list.skip(w)?,
                    }
                }
                Feature::Int64(v)
            }
        };
    }
    Ok(f)
}

/// Adds the map entries of a `Features` message to `out` (a key given twice: the last wins).
fn parse_features(features: &[u8], out: &mut HashMap<Vec<u8>, Feature>) -> Result<(), String> {
    let mut features = Reader::new(features);
    while let Some(entry) = features.next_field_1()? {
        let (key, value) = map_entry(entry)?;
        out.insert(key, value.map(parse_feature).transpose()?.unwrap_or(Feature::Empty));
    }
    Ok(())
}

/// The key (field 1) and the value's payload (field 2) of a map entry.
fn map_entry(entry: &[u8]) -> Result<(Vec<u8>, Option<&[u8]>), String> {
    let mut entry = Reader::new(entry);
    let (mut key, mut value) = (Vec::new(), None);
    while !entry.done() {
        match entry.tag()? {
            (1, 2) => key = entry.bytes()?.to_vec(),
            (2, 2) => value = Some(entry.bytes()?),
            (_, w) => entry.skip(w)?,
        }
    }
    Ok((key, value))
}

/// The features of a serialized `Example` (a key given twice: the last wins).
pub(crate) fn parse_example(b: &[u8]) -> Result<HashMap<Vec<u8>, Feature>, String> {
    let mut out = HashMap::new();
    let mut r = Reader::new(b);
    // Example.features (field 1), then Features.feature (map entries, field 1).
    while let Some(features) = r.next_field_1()? {
        parse_features(features, &mut out)?;
    }
    Ok(out)
}

/// A serialized `SequenceExample`: its context features and its feature lists (each a
/// list of features, one per time step).
pub(crate) struct SequenceExample {
    pub(crate) context: HashMap<Vec<u8>, Feature>,
    pub(crate) lists: HashMap<Vec<u8>, Vec<Feature>>,
}

/// Parses a `SequenceExample`: `context` (field 1, a `Features`) and `feature_lists` (field
/// 2, a `FeatureLists`: map entries of field 1 whose values are `FeatureList`s, each a
/// repeated `Feature` of field 1).
pub(crate) fn parse_sequence_example(b: &[u8]) -> Result<SequenceExample, String> {
    let mut out = SequenceExample { context: HashMap::new(), lists: HashMap::new() };
    let mut r = Reader::new(b);
    while !r.done() {
        match r.tag()? {
            (1, 2) => parse_features(r.bytes()?, &mut out.context)?,
            (2, 2) => {
                let mut lists = Reader::new(r.bytes()?);
                while let Some(entry) = lists.next_field_1()? {
                    let (key, value) = map_entry(entry)?;
                    let mut steps = Vec::new();
                    if let Some(list) = value {
                        let mut list = Reader::new(list);
                        while let Some(f) = list.next_field_1()? {
                            steps.push(parse_feature(f)?);
                        }
                    }
                    out.lists.insert(key, steps);
                }
            }
            (_, w) => r.skip(w)?,
        }
    }
    Ok(out)
}
