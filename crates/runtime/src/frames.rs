//! The dynamic side of TensorFlow 1.x control flow within one step: frame instances (one
//! per execution of a while loop: per enclosing frame instance and iteration), their live
//! iterations, and how a finished node's outputs activate its successors. The rules are
//! TensorFlow's executor's:
//!
//! - an output is live (a value) or dead (none); a node with a dead input does not run and
//!   its outputs are dead, except `Merge`, which runs on its first live input (or, dead,
//!   once every input is dead), and `ControlTrigger`, which always runs live;
//! - `Enter` puts its value into iteration 0 of the child frame (a constant `Enter` into
//!   every iteration), `NextIteration` into the next iteration (starting it unless
//!   `parallel_iterations` are already running, in which case it waits), `Exit` into the
//!   enclosing frame; a dead `NextIteration` ends its chain and a dead `Exit` of the last
//!   iteration is passed on, dead, only when the whole frame is done (a loop in the untaken
//!   branch of a `cond`);
//! - an iteration is done when nothing of it runs or waits to run, no child frame of it is
//!   alive, and the iteration before it is done (for iteration 0: every `Enter` of the
//!   frame has arrived); a frame is done when all its iterations are.
//!
//! All of this runs under the step's one lock, outside any kernel.

use std::collections::{HashMap, VecDeque};

use ferroflow_kernels::Value;

use crate::control_flow_info::Kind;
use crate::executor::Executor;

/// A value on an edge: `None` when dead.
pub(crate) type Entry = Option<Value>;

/// A node ready to run in a frame instance and iteration, with its inputs.
pub(crate) struct Ready {
    pub id: usize,
    pub frame: usize,
    pub iter: u64,
    pub dead: bool,
    /// One per data input; `None` where the input is dead (or, for a `Merge`, not taken).
    pub inputs: Vec<Entry>,
}

struct Iteration {
    pending: Vec<u32>,
    dead: Vec<u32>,
    slots: Vec<Entry>,
    outstanding_ops: usize,
    outstanding_frames: usize,
}

struct Frame {
    sframe: usize,
    /// TensorFlow's id of this instance (0 for the root; else from the parent's id, the
    /// parent's iteration and the frame name), part of the rendezvous keys of tensors sent
    /// in it.
    id: u64,
    parent: Option<(usize, u64)>,
    /// Iterations `first_iter ..`, `None` once done (until it is popped from the front).
    iters: VecDeque<Option<Iteration>>,
    first_iter: u64,
    iteration_count: u64,
    outstanding_iterations: usize,
    pending_inputs: usize,
    max_parallel: usize,
    loop_invariants: Vec<(usize, Entry)>,
    next_iteration_roots: Vec<(usize, Entry)>,
    dead_exits: Vec<usize>,
}

/// Every live frame instance of one step.
pub(crate) struct Frames {
    slab: Vec<Option<Frame>>,
    free: Vec<usize>,
    children: HashMap<(usize, u64, usize), usize>,
    root_done: bool,
}

impl Frames {
    /// The root frame with its iteration 0, and the graph's roots ready in it.
    pub(crate) fn start(ex: &Executor, ready: &mut Vec<Ready>) -> Frames {
        let mut f = Frames { slab: Vec::new(), free: Vec::new(), children: HashMap::new(), root_done: false };
        let root = f.new_frame(ex, 0, None);
        let it = f.iter_mut(root, 0);
        it.outstanding_ops = ex.roots.len();
        for &r in &ex.roots {
            ready.push(Ready { id: r, frame: root, iter: 0, dead: false, inputs: Vec::new() });
        }
        if ex.roots.is_empty() {
            f.cleanup_iterations(ex, root, 0, ready);
            f.root_done = true;
        }
        f
    }

    /// Whether the root frame has finished (every node of it ran or was dead).
    pub(crate) fn root_done(&self) -> bool {
        self.root_done
    }

    /// Names of root-frame nodes still waiting for inputs (for an error message).
    pub(crate) fn waiting(&self, ex: &Executor) -> Vec<String> {
        let Some(Some(root)) = self.slab.first() else { return vec![] };
        let Some(Some(it)) = root.iters.front() else { return vec![] };
        let frame = &ex.frames[0];
        frame
            .nodes
            .iter()
            .enumerate()
            .filter(|&(l, _)| it.pending[l] != 0 && it.pending[l] != frame.pending0[l])
            .map(|(_, &g)| ex.nodes[g].def.name.clone())
            .take(5)
            .collect()
    }

    fn new_frame(&mut self, ex: &Executor, sframe: usize, parent: Option<(usize, u64)>) -> usize {
        let sf = &ex.frames[sframe];
        let id = match parent {
            None => 0,
            Some((p, iter)) => ferroflow_core::child_frame_id(self.frame(p).id, iter, &sf.name),
        };
        let frame = Frame {
            sframe,
            id,
            parent,
            iters: VecDeque::from([Some(new_iteration(ex, sframe))]),
            first_iter: 0,
            iteration_count: 0,
            outstanding_iterations: 1,
            pending_inputs: sf.num_enters,
            max_parallel: sf.parallel_iterations.max(1),
            loop_invariants: Vec::new(),
            next_iteration_roots: Vec::new(),
            dead_exits: Vec::new(),
        };
        match self.free.pop() {
            Some(i) => {
                self.slab[i] = Some(frame);
                i
            }
            None => {
                self.slab.push(Some(frame));
                self.slab.len() - 1
            }
        }
    }

    /// TensorFlow's id of frame instance `f` (0 for the root).
    pub(crate) fn frame_id(&self, f: usize) -> u64 {
        self.slab.get(f).and_then(|x| x.as_ref()).map_or(0, |fr| fr.id)
    }

    fn frame(&mut self, f: usize) -> &mut Frame {
        self.slab[f].as_mut().expect("a live frame instance")
    }

    fn iter_mut(&mut self, f: usize, iter: u64) -> &mut Iteration {
        let fr = self.frame(f);
        let i = (iter - fr.first_iter) as usize;
        fr.iters[i].as_mut().expect("a live iteration")
    }

    fn has_iter(&self, f: usize, iter: u64) -> bool {
        let Some(Some(fr)) = self.slab.get(f) else { return false };
        iter >= fr.first_iter && fr.iters.get((iter - fr.first_iter) as usize).is_some_and(|i| i.is_some())
    }

    /// Records that node `r` finished with `outputs` and schedules what became ready.
    pub(crate) fn propagate(&mut self, ex: &Executor, r: &Ready, outputs: Vec<Entry>, ready: &mut Vec<Ready>) {
        let node = &ex.nodes[r.id];
        match node.kind {
            Kind::Enter { child, constant } => {
                let c = self.child_frame(ex, r.frame, r.iter, child);
                let v = outputs.into_iter().next().flatten();
                if constant {
                    self.add_loop_invariant(ex, c, r.id, v, ready);
                } else {
                    self.activate(ex, c, 0, r.id, r.dead, &[v], ready);
                }
                let fr = self.frame(c);
                fr.pending_inputs -= 1;
                if fr.pending_inputs == 0 {
                    let first = fr.first_iter;
                    if self.cleanup_iterations(ex, c, first, ready) {
                        self.frame_done(ex, c, ready);
                    }
                }
            }
            Kind::Exit => {
                if r.dead || outputs.first().is_none_or(|o| o.is_none()) {
                    let fr = self.frame(r.frame);
                    if r.iter == fr.iteration_count {
                        fr.dead_exits.push(r.id);
                    }
                } else if let Some((p, pi)) = self.frame(r.frame).parent {
                    self.activate(ex, p, pi, r.id, false, &outputs, ready);
                }
                // (An Exit outside every loop frame is rejected when the graph is
                // analysed: control_flow_info.)
            }
            Kind::NextIteration => {
                let v = outputs.into_iter().next().flatten();
                if !r.dead && v.is_some() {
                    let fr = self.frame(r.frame);
                    if r.iter == fr.iteration_count && fr.outstanding_iterations >= fr.max_parallel {
                        fr.next_iteration_roots.push((r.id, v));
                    } else {
                        let next = if r.iter == fr.iteration_count {
                            self.increment_iteration(ex, r.frame, ready)
                        } else {
                            r.iter + 1
                        };
                        self.activate(ex, r.frame, next, r.id, false, &[v], ready);
                    }
                }
            }
            _ => self.activate(ex, r.frame, r.iter, r.id, r.dead, &outputs, ready),
        }
        let it = self.iter_mut(r.frame, r.iter);
        it.outstanding_ops -= 1;
        if it.outstanding_ops == 0 && self.cleanup_iterations(ex, r.frame, r.iter, ready) {
            self.frame_done(ex, r.frame, ready);
        }
    }

    /// Passes `src`'s outputs along its out-edges into iteration `iter` of frame `f`.
    #[allow(clippy::too_many_arguments)]
    fn activate(
        &mut self,
        ex: &Executor,
        f: usize,
        iter: u64,
        src: usize,
        src_dead: bool,
        outputs: &[Entry],
        ready: &mut Vec<Ready>,
    ) {
        let s = &ex.nodes[src];
        let src_is_enter = matches!(s.kind, Kind::Enter { .. });
        for e in s.out_edges.iter() {
            let v = if src_dead { None } else { outputs.get(e.slot).cloned().flatten() };
            self.activate_edge(ex, f, iter, e.dst, Some((e.input, v)), src_dead, src_is_enter, ready);
        }
        for &d in &s.control_out {
            self.activate_edge(ex, f, iter, d, None, src_dead, src_is_enter, ready);
        }
    }

    /// One edge into `d`: `Some((input index, value))` for data, `None` for control.
    #[allow(clippy::too_many_arguments)]
    fn activate_edge(
        &mut self,
        ex: &Executor,
        f: usize,
        iter: u64,
        d: usize,
        edge: Option<(usize, Entry)>,
        src_dead: bool,
        src_is_enter: bool,
        ready: &mut Vec<Ready>,
    ) {
        let dn = &ex.nodes[d];
        let l = dn.local;
        let it = self.iter_mut(f, iter);
        let (now, dead) = if dn.kind == Kind::Merge {
            match edge {
                None => {
                    it.pending[l] = it.pending[l].saturating_sub(2);
                    let dead = it.dead[l] as usize == dn.num_inputs;
                    (it.pending[l] == 0 || (it.pending[l] == 1 && dead), dead)
                }
                Some((k, Some(v))) => {
                    let count = it.pending[l];
                    it.pending[l] &= !1;
                    if count & 1 == 1 {
                        it.slots[dn.input_base + k] = Some(v);
                    }
                    (count == 1, false)
                }
                Some((_, None)) => {
                    it.dead[l] += 1;
                    let dead = it.dead[l] as usize == dn.num_inputs || src_is_enter;
                    (it.pending[l] == 1 && dead, dead)
                }
            }
        } else {
            if it.pending[l] == 0 {
                // Already ran in this iteration (cannot happen in a well-formed graph).
                return;
            }
            let dead_edge = src_dead || matches!(edge, Some((_, None)));
            it.pending[l] -= 1;
            if dead_edge {
                it.dead[l] += 1;
            }
            if let Some((k, Some(v))) = edge {
                it.slots[dn.input_base + k] = Some(v);
            }
            (it.pending[l] == 0, it.dead[l] > 0)
        };
        if now {
            self.make_ready(ex, f, iter, d, dead, ready);
        }
    }

    fn make_ready(&mut self, ex: &Executor, f: usize, iter: u64, d: usize, dead: bool, ready: &mut Vec<Ready>) {
        let dn = &ex.nodes[d];
        let it = self.iter_mut(f, iter);
        let dead = dead && dn.kind != Kind::ControlTrigger;
        let inputs = it.slots[dn.input_base..dn.input_base + dn.num_inputs].iter_mut().map(Option::take).collect();
        it.outstanding_ops += 1;
        ready.push(Ready { id: d, frame: f, iter, dead, inputs });
    }

    fn child_frame(&mut self, ex: &Executor, parent: usize, iter: u64, sframe: usize) -> usize {
        if let Some(&c) = self.children.get(&(parent, iter, sframe)) {
            return c;
        }
        let c = self.new_frame(ex, sframe, Some((parent, iter)));
        self.children.insert((parent, iter, sframe), c);
        self.iter_mut(parent, iter).outstanding_frames += 1;
        c
    }

    fn add_loop_invariant(&mut self, ex: &Executor, f: usize, node: usize, v: Entry, ready: &mut Vec<Ready>) {
        let fr = self.frame(f);
        fr.loop_invariants.push((node, v.clone()));
        let (first, last) = (fr.first_iter, fr.iteration_count);
        for i in first..=last {
            if self.has_iter(f, i) {
                self.activate(ex, f, i, node, v.is_none(), std::slice::from_ref(&v), ready);
            }
        }
    }

    fn increment_iteration(&mut self, ex: &Executor, f: usize, ready: &mut Vec<Ready>) -> u64 {
        let sframe = self.frame(f).sframe;
        let fresh = new_iteration(ex, sframe);
        let fr = self.frame(f);
        fr.iteration_count += 1;
        let next = fr.iteration_count;
        fr.iters.push_back(Some(fresh));
        fr.outstanding_iterations += 1;
        fr.dead_exits.clear();
        let roots = std::mem::take(&mut fr.next_iteration_roots);
        let invariants = fr.loop_invariants.clone();
        for (node, v) in roots.into_iter().chain(invariants) {
            self.activate(ex, f, next, node, v.is_none(), std::slice::from_ref(&v), ready);
        }
        next
    }

    fn iteration_done(&self, f: usize, iter: u64) -> bool {
        let Some(Some(fr)) = self.slab.get(f) else { return false };
        if iter < fr.first_iter {
            return false;
        }
        let Some(Some(it)) = fr.iters.get((iter - fr.first_iter) as usize) else { return false };
        it.outstanding_ops == 0
            && it.outstanding_frames == 0
            && if iter == 0 { fr.pending_inputs == 0 } else { !self.has_iter(f, iter - 1) }
    }

    /// Retires the done iterations from `iter` on (starting a deferred one for each);
    /// returns whether the frame is done.
    fn cleanup_iterations(&mut self, ex: &Executor, f: usize, iter: u64, ready: &mut Vec<Ready>) -> bool {
        let mut cur = iter;
        while cur <= self.frame(f).iteration_count && self.iteration_done(f, cur) {
            let fr = self.frame(f);
            let i = (cur - fr.first_iter) as usize;
            fr.iters[i] = None;
            while matches!(fr.iters.front(), Some(None)) {
                fr.iters.pop_front();
                fr.first_iter += 1;
            }
            fr.outstanding_iterations -= 1;
            cur += 1;
            if !fr.next_iteration_roots.is_empty() {
                self.increment_iteration(ex, f, ready);
            }
        }
        let fr = self.frame(f);
        fr.pending_inputs == 0 && fr.outstanding_iterations == 0
    }

    /// Deletes a finished frame: its dead exits reach the enclosing frame (dead), whose
    /// iteration may be done in turn.
    fn frame_done(&mut self, ex: &Executor, f: usize, ready: &mut Vec<Ready>) {
        let Some(fr) = self.slab[f].take() else { return };
        self.free.push(f);
        let Some((p, pi)) = fr.parent else {
            self.root_done = true;
            return;
        };
        self.children.remove(&(p, pi, fr.sframe));
        for &x in &fr.dead_exits {
            let s = &ex.nodes[x];
            let targets = s.out_edges.iter().map(|e| e.dst).chain(s.control_out.iter().copied());
            for d in targets.collect::<Vec<_>>() {
                let dn = &ex.nodes[d];
                let l = dn.local;
                let it = self.iter_mut(p, pi);
                it.dead[l] += 1;
                let now = if dn.kind == Kind::Merge {
                    it.pending[l] == 1 && it.dead[l] as usize == dn.num_inputs
                } else {
                    it.pending[l] = it.pending[l].saturating_sub(1);
                    it.pending[l] == 0
                };
                if now {
                    self.make_ready(ex, p, pi, d, true, ready);
                }
            }
        }
        self.iter_mut(p, pi).outstanding_frames -= 1;
        if self.cleanup_iterations(ex, p, pi, ready) {
            self.frame_done(ex, p, ready);
        }
    }
}

/// `Merge` (computed by the executor, not a kernel): the first live input and its index.
pub(crate) fn merge(inputs: Vec<Entry>) -> Vec<Entry> {
    match inputs.into_iter().enumerate().find_map(|(i, v)| v.map(|v| (i, v))) {
        Some((i, v)) => vec![Some(v), Some(Value::Tensor(ferroflow_core::Tensor::scalar(i as i32)))],
        None => vec![None, None],
    }
}

fn new_iteration(ex: &Executor, sframe: usize) -> Iteration {
    let sf = &ex.frames[sframe];
    Iteration {
        pending: sf.pending0.clone(),
        dead: vec![0; sf.pending0.len()],
        slots: vec![None; sf.num_slots],
        outstanding_ops: 0,
        outstanding_frames: 0,
    }
}
