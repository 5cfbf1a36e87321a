//! `CTCBeamSearchDecoder`: TensorFlow's prefix beam search. Each beam entry is a label
//! prefix in a tree; it keeps the log probability of the prefix ending in a blank, in its
//! last label, and in total, for this step (`newp`) and the last (`oldp`). Every step
//! extends the surviving prefixes (most probable first) by every non-blank class; the
//! `beam_width` most probable stay. The `top_paths` best are returned with their log
//! probabilities; `merge_repeated` merges repeated labels of a path.

use std::collections::HashMap;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};
use rayon::prelude::*;

use super::decode::{decode_inputs, set_decoded, DecodeInputs};
use super::{bool_attr, int_attr, log_sum_exp, LogReal};
use crate::{OpContext, OpKernel};

struct BeamSearch {
    beam_width: usize,
    top_paths: usize,
    merge_repeated: bool,
}

pub(super) fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let beam_width = int_attr(n, "beam_width", 0)?;
    let top_paths = int_attr(n, "top_paths", 0)?;
    if beam_width < 1 || top_paths < 1 {
        return Err(ferroflow_core::NodeAttrs::node_error(
            n,
            format!("beam_width ({beam_width}) and top_paths ({top_paths}) must be at least 1"),
        ));
    }
    Ok(Box::new(BeamSearch {
        beam_width: beam_width as usize,
        top_paths: top_paths as usize,
        merge_repeated: bool_attr(n, "merge_repeated", true)?,
    }))
}

#[derive(Clone, Copy)]
struct Prob<T> {
    total: T,
    blank: T,
    label: T,
}

impl<T: LogReal> Prob<T> {
    const ZERO: Prob<T> = Prob { total: T::LOG_ZERO, blank: T::LOG_ZERO, label: T::LOG_ZERO };
}

/// The root's label: no class.
const NO_LABEL: usize = usize::MAX;

struct Entry<T> {
    parent: Option<usize>,
    label: usize,
    children: HashMap<usize, usize>,
    oldp: Prob<T>,
    newp: Prob<T>,
}

/// The search of one batch entry: the prefix tree and the entries in the beam.
struct Search<T> {
    tree: Vec<Entry<T>>,
    beam: Vec<usize>,
    width: usize,
}

impl<T: LogReal> Search<T> {
    fn new(width: usize) -> Search<T> {
        let root = Entry {
            parent: None,
            label: NO_LABEL,
            children: HashMap::new(),
            oldp: Prob::ZERO,
            newp: Prob { total: T::ZERO, blank: T::ZERO, label: T::LOG_ZERO },
        };
        Search { tree: vec![root], beam: vec![0], width }
    }

    fn total(&self, e: usize) -> T {
        self.tree[e].newp.total
    }

    /// The least probable entry of a full beam (the first of equals).
    fn bottom(&self) -> usize {
        let mut m = 0;
        for i in 1..self.beam.len() {
            if self.total(self.beam[m]) > self.total(self.beam[i]) {
                m = i;
            }
        }
        m
    }

    /// Adds `e` to the beam; a full beam keeps it only in place of a less probable entry.
    fn push(&mut self, e: usize) {
        if self.beam.len() < self.width {
            self.beam.push(e);
        } else {
            let m = self.bottom();
            if self.total(e) > self.total(self.beam[m]) {
                self.beam[m] = e;
            }
        }
    }

    /// The beam's entries, most probable first; the beam is left empty.
    fn extract(&mut self) -> Vec<usize> {
        let mut v = std::mem::take(&mut self.beam);
        v.sort_by(|&a, &b| self.total(b).partial_cmp(&self.total(a)).unwrap_or(std::cmp::Ordering::Equal));
        v
    }

    fn is_candidate(&self, p: Prob<T>) -> bool {
        p.total > T::LOG_ZERO && (self.beam.len() < self.width || p.total > self.total(self.beam[self.bottom()]))
    }

    fn child(&mut self, e: usize, label: usize) -> usize {
        if let Some(&c) = self.tree[e].children.get(&label) {
            return c;
        }
        let c = self.tree.len();
        self.tree.push(Entry { parent: Some(e), label, children: HashMap::new(), oldp: Prob::ZERO, newp: Prob::ZERO });
        self.tree[e].children.insert(label, c);
        c
    }

    /// One time step of logits `row` (the blank last).
    fn step(&mut self, row: &[T]) {
        let blank = row.len() - 1;
        let max = row.iter().copied().fold(row[0], |m, v| if v > m { v } else { m });
        let norm = max + row.iter().fold(T::ZERO, |a, &v| a + (v - max).exp()).ln();
        let branches = self.extract();
        for &b in &branches {
            self.tree[b].oldp = self.tree[b].newp;
        }
        for &b in &branches {
            let e = &self.tree[b];
            let mut label = e.newp.label;
            if let Some(p) = e.parent {
                let parent = &self.tree[p];
                if parent.newp.total != T::LOG_ZERO {
                    let previous = if e.label == parent.label { parent.oldp.blank } else { parent.oldp.total };
                    label = log_sum_exp(label, previous);
                }
                label += row[e.label] - norm;
            }
            let blank_p = e.oldp.total + row[blank] - norm;
            self.tree[b].newp = Prob { total: log_sum_exp(blank_p, label), blank: blank_p, label };
            self.push(b);
        }
        for &b in &branches {
            let old = self.tree[b].oldp;
            if !self.is_candidate(old) {
                continue;
            }
            let b_label = self.tree[b].label;
            for (k, &logit) in row[..blank].iter().enumerate() {
                let c = self.child(b, k);
                if self.tree[c].newp.total != T::LOG_ZERO {
                    continue;
                }
                let previous = if k == b_label { old.blank } else { old.total };
                let p = logit - norm + previous;
                self.tree[c].newp = Prob { total: p, blank: T::LOG_ZERO, label: p };
                if self.is_candidate(self.tree[c].newp) {
                    if self.beam.len() == self.width {
                        let bottom = self.beam[self.bottom()];
                        self.tree[bottom].newp = Prob::ZERO;
                    }
                    self.push(c);
                } else {
                    self.tree[c].oldp = Prob::ZERO;
                    self.tree[c].newp = Prob::ZERO;
                }
            }
        }
    }

    /// The labels of entry `e`'s prefix (repeats merged if asked).
    fn labels(&self, mut e: usize, merge: bool) -> Vec<usize> {
        let mut out = Vec::new();
        let mut prev = NO_LABEL;
        while let Some(p) = self.tree[e].parent {
            let l = self.tree[e].label;
            if !merge || l != prev {
                out.push(l);
            }
            prev = l;
            e = p;
        }
        out.reverse();
        out
    }
}

impl BeamSearch {
    /// The best paths of entry `b` and their log probabilities.
    fn entry<T: LogReal>(&self, x: &[T], d: &DecodeInputs, b: usize) -> Result<(Vec<Vec<usize>>, Vec<T>), String> {
        let mut s = Search::<T>::new(self.beam_width);
        for t in 0..d.seq[b].max(0) as usize {
            s.step(&x[(t * d.batch + b) * d.classes..(t * d.batch + b + 1) * d.classes]);
        }
        if self.top_paths > self.beam_width {
            return Err("requested more paths than the beam width.".into());
        }
        if self.top_paths > s.beam.len() {
            return Err("Less leaves in the beam search than requested.".into());
        }
        let best = s.extract();
        let paths = best[..self.top_paths].iter().map(|&e| s.labels(e, self.merge_repeated)).collect();
        let scores = best[..self.top_paths].iter().map(|&e| s.total(e)).collect();
        Ok((paths, scores))
    }

    fn decode<T: LogReal>(&self, ctx: &mut OpContext, d: &DecodeInputs) -> Result<(), Status> {
        let x = d.x.as_slice::<T>()?;
        let results: Vec<_> = (0..d.batch).into_par_iter().map(|b| self.entry(x, d, b)).collect();
        let mut seqs = Vec::with_capacity(d.batch);
        let mut scores = Vec::with_capacity(d.batch * self.top_paths);
        for r in results {
            let (paths, s) = r.map_err(|m| ctx.error(m))?;
            seqs.push(paths);
            scores.extend(s);
        }
        set_decoded(ctx, &seqs, self.top_paths)?;
        ctx.set_output(3 * self.top_paths, Tensor::new(vec![d.batch, self.top_paths], scores)?)
    }
}

impl OpKernel for BeamSearch {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let d = decode_inputs(ctx)?;
        match d.x.dtype() {
            DataType::Double => self.decode::<f64>(ctx, &d),
            _ => self.decode::<f32>(ctx, &d),
        }
    }

    fn is_expensive(&self) -> bool {
        true
    }
}
