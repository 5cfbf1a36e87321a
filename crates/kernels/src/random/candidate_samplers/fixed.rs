//! `FixedUnigramCandidateSampler`: classes drawn from given weights (the `unigrams` attr, or
//! the last column of each line of the CSV `vocab_file`), raised to `distortion`, after
//! `num_reserved_ids` classes of weight 0, keeping only this shard's classes (the ids `i`
//! with `i % num_shards == shard`; the ids of the file continue from the reserved ids this
//! shard kept, as TensorFlow numbers them). Draws use Walker's alias method built as
//! TensorFlow's `DistributionSampler` builds it (a float and a bucket per draw).

use std::collections::HashSet;

use ferroflow_core::proto::{attr_value::Value as AttrKind, NodeDef};
use ferroflow_core::{Code, NodeAttrs, Status};

use super::super::candidates::{draw_with, sampler_kernel, Drawn, RangeSampler, SimplePhilox};
use crate::OpKernel;

/// The sampler: weights (and their float sum) and the alias table.
struct Fixed {
    range: i64,
    weights: Vec<f32>,
    total: f32,
    /// Per bucket: the probability of keeping it, and its alias.
    table: Vec<(f32, usize)>,
}

/// Walker's alias table (TensorFlow's `DistributionSampler` constructor, whose float and
/// double roundings it keeps).
fn alias_table(weights: &[f32]) -> Vec<(f32, usize)> {
    let n = weights.len();
    let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    let mut pr: Vec<f64> = weights.iter().map(|&w| f64::from(w * n as f32) / sum).collect();
    let (mut low, mut high): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| pr[i] < 1.0);
    let mut alt: Vec<usize> = (0..n).collect();
    while let (Some(&l), Some(&h)) = (low.last(), high.last()) {
        low.pop();
        high.pop();
        alt[l] = h;
        let remaining = pr[h] - (1.0 - pr[l]);
        pr[h] = remaining;
        if remaining < 1.0 {
            low.push(h);
        } else {
            high.push(h);
        }
    }
    let mut table: Vec<(f32, usize)> = pr.iter().zip(alt).map(|(&p, a)| (p as f32, a)).collect();
    // Rounding leaves buckets near 1 on either list: they keep themselves.
    for &i in high.iter().chain(&low) {
        table[i] = (1.0, i);
    }
    table
}

impl Fixed {
    fn sample(&self, rnd: &mut SimplePhilox) -> i64 {
        let r = rnd.rand_float();
        let idx = rnd.uniform(self.table.len() as u32) as usize;
        match self.table.get(idx) {
            Some(&(p, _)) if r < p => idx as i64,
            Some(&(_, alt)) => alt as i64,
            None => idx as i64,
        }
    }

    /// How many classes a draw can return: a bucket when its probability is positive (the
    /// float may be 0), its alias when the float can reach its probability.
    fn reachable(&self) -> usize {
        const MAX_FLOAT: f32 = 1.0 - 1.0 / (1u32 << 23) as f32;
        let mut seen = HashSet::new();
        for (i, &(p, alt)) in self.table.iter().enumerate() {
            if p > 0.0 {
                seen.insert(i);
            }
            if p <= MAX_FLOAT || p.is_nan() {
                seen.insert(alt);
            }
        }
        seen.len()
    }
}

impl RangeSampler for Fixed {
    fn range(&self) -> i64 {
        self.range
    }

    fn draw(&self, rnd: &mut SimplePhilox, unique: bool, n: usize, truth: &[i64]) -> Result<Drawn, String> {
        if unique && n > self.reachable() {
            // TensorFlow would draw until it gives up after 2^31 - 1 tries.
            return Err(format!(
                "cannot draw {n} distinct classes: only {} of the {} classes can be drawn",
                self.reachable(),
                self.range
            ));
        }
        let probability = |v: i64| match usize::try_from(v).ok().and_then(|i| self.weights.get(i)) {
            Some(&w) => w / self.total,
            None => 0.0,
        };
        draw_with(rnd, unique, n, truth, |r| self.sample(r), probability)
    }
}

/// The weights as TensorFlow's `FixedUnigramSampler` gathers them.
struct Weights {
    num_shards: i32,
    shard: i32,
    distortion: f32,
    weights: Vec<f32>,
    total: f32,
}

impl Weights {
    /// Weight 0 for this shard's reserved ids; `Err` with their number when more than `range`
    /// (the weights could only grow from there).
    fn new(num_reserved_ids: i32, num_shards: i32, shard: i32, distortion: f32, range: i64) -> Result<Weights, usize> {
        // The ids shard, shard + num_shards, ... below num_reserved_ids.
        let kept = if shard < num_shards && shard < num_reserved_ids {
            ((num_reserved_ids - 1 - shard) / num_shards + 1) as usize
        } else {
            0
        };
        if kept as i64 > range {
            return Err(kept);
        }
        Ok(Weights { num_shards, shard, distortion, weights: vec![0.0; kept], total: 0.0 })
    }

    /// The next ids' weights from `unigrams` (of this shard).
    fn extend(&mut self, unigrams: &[f32]) {
        let mut id = self.weights.len() as i32;
        for &w in unigrams {
            if id % self.num_shards == self.shard {
                self.push(w);
            }
            id = id.wrapping_add(1);
        }
    }

    fn push(&mut self, w: f32) {
        let w = w.powf(self.distortion);
        self.total += w;
        self.weights.push(w);
    }

    /// The next ids' weights from a CSV file's lines (last field; empty lines skipped; the
    /// lines of other shards are not read).
    fn extend_from_file(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut id = self.weights.len() as i32;
        let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        for line in lines {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            if id % self.num_shards == self.shard {
                let last = line.rsplit(|&b| b == b',').next().unwrap_or(line);
                let w = std::str::from_utf8(last)
                    .ok()
                    .and_then(parse_float)
                    .ok_or_else(|| format!("Wrong vocabulary format at line: {}", String::from_utf8_lossy(line)))?;
                self.push(w);
            }
            id = id.wrapping_add(1);
        }
        Ok(())
    }
}

/// A float as C's `strtof` reads it, allowing surrounding whitespace: decimal, hexadecimal
/// (`0x1.8p3`), `inf`/`infinity` and `nan`/`nan(...)` in any case; `None` unless the whole
/// text is the number.
fn parse_float(s: &str) -> Option<f32> {
    let t = s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'));
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let v = if lower == "inf" || lower == "infinity" {
        f32::INFINITY
    } else if lower == "nan"
        || (lower.starts_with("nan(")
            && lower.ends_with(')')
            && lower[4..lower.len() - 1].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    {
        f32::NAN
    } else if let Some(hex) = lower.strip_prefix("0x") {
        parse_hex(hex)?
    } else if !body.starts_with(['+', '-'])
        && body.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        body.parse::<f32>().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

/// The digits of a hexadecimal float after `0x`: a mantissa with an optional point and an
/// optional binary exponent `p[+-]d...`.
fn parse_hex(s: &str) -> Option<f32> {
    let (mant, exp) = match s.split_once('p') {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let (mut m, mut shift, mut sticky) = (0u64, exp, false);
    for (k, c) in int.chars().chain(frac.chars()).enumerate() {
        let d = u64::from(c.to_digit(16)?);
        if m >> 52 == 0 {
            m = (m << 4) | d;
            if k >= int.len() {
                shift = shift.saturating_sub(4);
            }
        } else {
            sticky |= d != 0;
            if k < int.len() {
                shift = shift.saturating_add(4);
            }
        }
    }
    // At most 56 bits, the digits dropped kept as a sticky bit (rounded to double, then to
    // float: twice for mantissas beyond 53 bits, where strtof rounds once).
    let m = m | u64::from(sticky);
    Some((m as f64 * 2f64.powi(shift)) as f32)
}

/// Attr `name` as an int32 (TensorFlow narrows these attrs).
fn int32(n: &NodeDef, name: &str, default: i64) -> Result<i32, Status> {
    let v = if n.has_attr(name) { n.attr_int(name)? } else { default };
    i32::try_from(v).map_err(|_| n.node_error(format!("{name} = {v} does not fit in int32")))
}

pub(super) fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let range = n.attr_int("range_max")?;
    if range <= 0 {
        return Err(n.node_error("range_max must be positive"));
    }
    let vocab_file = if n.has_attr("vocab_file") { n.attr_string("vocab_file")? } else { String::new() };
    let unigrams = match n.attr_value("unigrams").ok().and_then(|a| a.value.as_ref()) {
        None => Vec::new(),
        Some(AttrKind::List(l)) => l.f.clone(),
        Some(_) => return Err(n.node_error("attr 'unigrams' must be a list(float)")),
    };
    if vocab_file.is_empty() && unigrams.is_empty() {
        return Err(n.node_error("Must provide either vocab_file or unigrams."));
    }
    if !vocab_file.is_empty() && !unigrams.is_empty() {
        return Err(n.node_error("Must only provide one of vocab_file and unigrams."));
    }
    let distortion = if n.has_attr("distortion") { n.attr_float("distortion")? } else { 1.0 };
    let (num_shards, shard) = (int32(n, "num_shards", 1)?, int32(n, "shard", 0)?);
    if num_shards < 1 || shard < 0 {
        return Err(
            n.node_error(format!("num_shards ({num_shards}) must be positive and shard ({shard}) not negative"))
        );
    }
    let mut w = Weights::new(int32(n, "num_reserved_ids", 0)?, num_shards, shard, distortion, range)
        .map_err(|k| n.node_error(format!("range is {range} must be equal to weights size  {k} or more")))?;
    if vocab_file.is_empty() {
        w.extend(&unigrams);
    } else {
        let in_node = |e: Status| e.in_node(&n.name, &n.op);
        ferroflow_core::check_file_path(&vocab_file, "vocab_file").map_err(in_node)?;
        let bytes = std::fs::read(&vocab_file).map_err(|e| {
            in_node(match e.kind() {
                std::io::ErrorKind::NotFound => Status::not_found(format!("{vocab_file}; No such file or directory")),
                std::io::ErrorKind::PermissionDenied => {
                    Status::new(Code::PermissionDenied, format!("{vocab_file}; Permission denied"))
                }
                _ => Status::new(Code::Unknown, format!("{vocab_file}; {e}")),
            })
        })?;
        w.extend_from_file(&bytes).map_err(|e| n.node_error(e))?;
    }
    if w.weights.len() as i64 != range {
        return Err(n.node_error(format!("range is {range} must be equal to weights size  {}", w.weights.len())));
    }
    let table = alias_table(&w.weights);
    sampler_kernel(n, Box::new(Fixed { range, weights: w.weights, total: w.total, table }))
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, Tensor};

    use super::{alias_table, parse_float};
    use crate::testutil::{node, run_kernel, temp_paths};

    fn fixed(
        extra: &[(&str, ferroflow_core::proto::AttrValue)],
        unique: bool,
        range: i64,
    ) -> ferroflow_core::proto::NodeDef {
        let mut attrs = vec![
            ("num_true", attr::int(1)),
            ("num_sampled", attr::int(4)),
            ("unique", attr::bool(unique)),
            ("range_max", attr::int(range)),
            ("seed", attr::int(1)),
            ("seed2", attr::int(2)),
        ];
        attrs.extend(extra.iter().cloned());
        node("FixedUnigramCandidateSampler", &attrs)
    }

    fn truth(c: i64) -> Tensor {
        Tensor::new(vec![1, 1], vec![c]).unwrap()
    }

    #[test]
    fn floats_parse_as_strtof_reads_them() {
        for (s, want) in [
            (" 1.5 ", 1.5f32),
            ("+.5", 0.5),
            ("1e2", 100.0),
            ("0x1A", 26.0),
            ("0x1.8p1", 3.0),
            ("-0x10", -16.0),
            ("\t2\x0b", 2.0),
            ("1.", 1.0),
            ("1e39", f32::INFINITY),
            ("-Infinity", f32::NEG_INFINITY),
        ] {
            assert_eq!(parse_float(s), Some(want), "{s}");
        }
        assert!(parse_float("nan(12)").unwrap().is_nan());
        for bad in ["", " ", "2x", "1e", "0x", "+-1", "infin", "1_000", "0x-1", "- 1"] {
            assert_eq!(parse_float(bad), None, "{bad}");
        }
    }

    #[test]
    fn alias_table_keeps_the_distribution() {
        // Weights 1 2 3 2 over 4 buckets: each bucket's kept mass plus what others alias to it.
        let w = [1.0f32, 2.0, 3.0, 2.0];
        let t = alias_table(&w);
        let mut mass = [0f64; 4];
        for (i, &(p, alt)) in t.iter().enumerate() {
            mass[i] += f64::from(p) / 4.0;
            mass[alt] += (1.0 - f64::from(p)) / 4.0;
        }
        for (m, w) in mass.iter().zip(w) {
            assert!((m - f64::from(w) / 8.0).abs() < 1e-6, "{mass:?}");
        }
    }

    /// TensorFlow 2.21's draws for these files (see the golden cases for the unigrams attr).
    #[test]
    fn vocab_files_read_as_tensorflow_reads_them() {
        let (_dir, [basic, blank, junk]) = temp_paths("fixed_unigram", ["basic.csv", "blank.csv", "junk.csv"]);
        std::fs::write(&basic, "a,1\r\nb, 2 \nc,3").unwrap();
        std::fs::write(&blank, "a,1\n\nc,3\n").unwrap();
        std::fs::write(&junk, "a,2x\nb,2\n").unwrap();
        let out = run_kernel(fixed(&[("vocab_file", attr::string(&basic))], false, 3), vec![truth(0)], 3).unwrap();
        assert_eq!(out[0].as_slice::<i64>().unwrap(), &[2, 2, 1, 1]);
        let e: &[f32] = &[2.0, 2.0, 4.0 / 3.0, 4.0 / 3.0];
        assert!(out[2].as_slice::<f32>().unwrap().iter().zip(e).all(|(a, b)| (a - b).abs() < 1e-6));
        assert!((out[1].as_slice::<f32>().unwrap()[0] - 2.0 / 3.0).abs() < 1e-6);
        // A blank line is no class.
        let e = run_kernel(fixed(&[("vocab_file", attr::string(&blank))], false, 3), vec![truth(0)], 3).unwrap_err();
        assert!(e.message.contains("range is 3 must be equal to weights size  2"), "{e}");
        let e = run_kernel(fixed(&[("vocab_file", attr::string(&junk))], false, 2), vec![truth(0)], 3).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("Wrong vocabulary format at line: a,2x"), "{e}");
        let missing = format!("{basic}.missing");
        let e = run_kernel(fixed(&[("vocab_file", attr::string(&missing))], false, 3), vec![truth(0)], 3).unwrap_err();
        assert_eq!(e.code, Code::NotFound);
    }

    #[test]
    fn bad_attrs_and_unreachable_unique_draws_are_errors() {
        let u = |v: &[f32]| ("unigrams", attr::list_float(v));
        let e = run_kernel(fixed(&[], false, 3), vec![truth(0)], 3).unwrap_err();
        assert!(e.message.contains("Must provide either vocab_file or unigrams."), "{e}");
        let both = [u(&[1.0]), ("vocab_file", attr::string("x"))];
        let e = run_kernel(fixed(&both, false, 1), vec![truth(0)], 3).unwrap_err();
        assert!(e.message.contains("Must only provide one of vocab_file and unigrams."), "{e}");
        // Two classes of weight 0: four distinct draws are impossible (TensorFlow spins).
        let e = run_kernel(fixed(&[u(&[1.0, 0.0, 2.0, 0.0, 1.0])], true, 5), vec![truth(0)], 3).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("only 3 of the 5 classes can be drawn"), "{e}");
        let ok = run_kernel(fixed(&[u(&[1.0, 0.0, 2.0, 0.0, 1.0, 3.0])], true, 6), vec![truth(1)], 3).unwrap();
        let mut s = ok[0].as_slice::<i64>().unwrap().to_vec();
        s.sort_unstable();
        assert_eq!(s, vec![0, 2, 4, 5]);
        assert_eq!(ok[1].as_slice::<f32>().unwrap(), &[0.0]);
    }
}
