//! Where a queue keeps its elements, by kind: in arrival order (`FIFOQueue`,
//! `PaddingFIFOQueue`), in a bag drawn from at random (`RandomShuffleQueue`: TensorFlow's
//! Philox stream of the queue's seeds, one 32-bit sample per element taken, modulo the size,
//! the taken slot refilled by the last element), or by priority (`PriorityQueue`: the
//! smallest int64 in component 0 first, ties in the order libstdc++'s heap leaves them).

use std::collections::{HashMap, VecDeque};

use ferroflow_core::{Status, Tensor};

use super::queue::Tuple;
use crate::image::stl_order::{heap_pop, heap_push};
use crate::random::guarded::random_u64;
use crate::random::philox::Philox;

/// What kind of queue this is, with the kind's own settings.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueKind {
    /// `FIFOQueue`: fully known (or unconstrained) component shapes.
    Fifo,
    /// `PaddingFIFOQueue`: component shapes may have unknown dimensions; `DequeueMany` pads
    /// each batch to its largest element with zeros (empty strings).
    Padding,
    /// `RandomShuffleQueue`: dequeues take a random element while more than
    /// `min_after_dequeue` remain (any remaining once closed).
    Shuffle { min_after_dequeue: usize, seed: i64, seed2: i64 },
    /// `PriorityQueue`: component 0 is an int64 scalar priority, smallest first.
    Priority,
}

impl QueueKind {
    /// TensorFlow's name of the queue class (used in messages).
    pub fn type_name(&self) -> &'static str {
        match self {
            QueueKind::Fifo => "FIFOQueue",
            QueueKind::Padding => "PaddingFIFOQueue",
            QueueKind::Shuffle { .. } => "RandomShuffleQueue",
            QueueKind::Priority => "PriorityQueue",
        }
    }
}

/// TensorFlow's `SingleSampleAdapter<PhiloxRandom>` kept between calls.
pub(crate) struct Samples {
    gen: Philox,
    buf: [u32; 4],
    used: usize,
}

impl Samples {
    fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.buf = self.gen.next4();
            self.used = 0;
        }
        self.used += 1;
        self.buf[self.used - 1]
    }
}

/// The elements of one queue.
pub(crate) enum Store {
    Fifo(VecDeque<Tuple>),
    Shuffle { items: Vec<Tuple>, min_after_dequeue: usize, rng: Box<Samples> },
    Priority { heap: Vec<(i64, u64)>, slots: HashMap<u64, Tuple>, next: u64 },
}

/// libstdc++'s `std::priority_queue` with TensorFlow's comparator (`lhs > rhs`): a min-heap.
fn later(a: &(i64, u64), b: &(i64, u64)) -> bool {
    a.0 > b.0
}

/// The priority of a `PriorityQueue` element (component 0, an int64 scalar).
pub(crate) fn priority_of(t: &[Tensor]) -> Result<i64, Status> {
    let p = t.first().ok_or_else(|| Status::invalid_argument("PriorityQueue element has no priority component"))?;
    if p.num_elements() != 1 {
        return Err(Status::invalid_argument(format!(
            "PriorityQueue priority must be an int64 scalar, got shape {}",
            p.shape()
        )));
    }
    p.as_slice::<i64>()?.first().copied().ok_or_else(|| Status::internal("empty priority"))
}

impl Store {
    /// An empty store for `kind`.
    pub fn new(kind: &QueueKind) -> Store {
        match *kind {
            QueueKind::Fifo | QueueKind::Padding => Store::Fifo(VecDeque::new()),
            QueueKind::Shuffle { min_after_dequeue, seed, seed2 } => {
                let (s1, s2) =
                    if seed == 0 && seed2 == 0 { (random_u64(), random_u64()) } else { (seed as u64, seed2 as u64) };
                let rng = Box::new(Samples { gen: Philox::new(s1, s2), buf: [0; 4], used: 4 });
                Store::Shuffle { items: Vec::new(), min_after_dequeue, rng }
            }
            QueueKind::Priority => Store::Priority { heap: Vec::new(), slots: HashMap::new(), next: 0 },
        }
    }

    /// Number of elements held.
    pub fn len(&self) -> usize {
        match self {
            Store::Fifo(v) => v.len(),
            Store::Shuffle { items, .. } => items.len(),
            Store::Priority { heap, .. } => heap.len(),
        }
    }

    /// How many elements a dequeue may take now: a shuffling queue keeps `min_after_dequeue`
    /// until it is closed.
    pub fn available(&self, closed: bool) -> usize {
        match self {
            Store::Shuffle { items, min_after_dequeue, .. } if !closed => {
                items.len().saturating_sub(*min_after_dequeue)
            }
            _ => self.len(),
        }
    }

    /// Adds one (validated) element.
    pub fn push(&mut self, t: Tuple) {
        match self {
            Store::Fifo(v) => v.push_back(t),
            Store::Shuffle { items, .. } => items.push(t),
            Store::Priority { heap, slots, next } => {
                // Validation checked the priority; a bad one cannot reach here.
                let p = priority_of(&t).unwrap_or(i64::MAX);
                let id = *next;
                *next += 1;
                slots.insert(id, t);
                heap_push(heap, (p, id), &later);
            }
        }
    }

    /// Takes the next element (the caller checked [`Store::available`]).
    pub fn take(&mut self) -> Option<Tuple> {
        match self {
            Store::Fifo(v) => v.pop_front(),
            Store::Shuffle { items, rng, .. } => {
                if items.is_empty() {
                    return None;
                }
                let i = (rng.next_u32() as u64 % items.len() as u64) as usize;
                Some(items.swap_remove(i))
            }
            Store::Priority { heap, slots, .. } => {
                let (_, id) = heap_pop(heap, &later)?;
                slots.remove(&id)
            }
        }
    }

    /// Returns the elements of a dequeue that cannot complete (taken in `got`'s order), as
    /// TensorFlow does: to the front in order (FIFO), appended last to first (shuffle),
    /// re-pushed (priority).
    pub fn put_back(&mut self, got: Vec<Tuple>) {
        match self {
            Store::Fifo(v) => {
                for t in got.into_iter().rev() {
                    v.push_front(t);
                }
            }
            Store::Shuffle { items, .. } => items.extend(got.into_iter().rev()),
            Store::Priority { .. } => {
                for t in got.into_iter().rev() {
                    self.push(t);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(n: i32) -> Vec<Tuple> {
        (0..n).map(|i| vec![Tensor::scalar(i)]).collect()
    }

    fn drain(s: &mut Store, n: usize) -> Vec<i32> {
        (0..n).map(|_| s.take().unwrap()[0].scalar_value::<i32>().unwrap()).collect()
    }

    #[test]
    fn shuffle_order_is_tensorflows_for_its_seeds() {
        // TensorFlow 2.21: RandomShuffleQueueV2 of 0..12, dequeue_many(5), close, dequeue_up_to.
        for (seeds, first, rest) in [
            ((1, 2), vec![11, 5, 2, 8, 3], vec![10, 1, 7, 6, 4, 0, 9]),
            ((87654321, 7), vec![3, 10, 5, 4, 0], vec![8, 7, 6, 9, 1, 11, 2]),
        ] {
            let mut s = Store::new(&QueueKind::Shuffle { min_after_dequeue: 0, seed: seeds.0, seed2: seeds.1 });
            for t in ints(12) {
                s.push(t);
            }
            assert_eq!(drain(&mut s, 5), first);
            assert_eq!(drain(&mut s, 7), rest);
            assert!(s.take().is_none());
        }
    }

    #[test]
    fn shuffle_keeps_min_after_dequeue_until_closed() {
        let mut s = Store::new(&QueueKind::Shuffle { min_after_dequeue: 3, seed: 1, seed2: 1 });
        for t in ints(5) {
            s.push(t);
        }
        assert_eq!(s.available(false), 2);
        assert_eq!(s.available(true), 5);
        let got: Vec<Tuple> = (0..2).filter_map(|_| s.take()).collect();
        assert_eq!(s.available(false), 0);
        s.put_back(got);
        assert_eq!(s.len(), 5);
    }

    #[test]
    fn priority_takes_smallest_first_and_fifo_puts_back_in_order() {
        let mut s = Store::new(&QueueKind::Priority);
        for (i, p) in [5i64, 1, 3, 9, 0].into_iter().enumerate() {
            s.push(vec![Tensor::scalar(p), Tensor::scalar(i as i32)]);
        }
        let order: Vec<i64> = (0..5).map(|_| s.take().unwrap()[0].scalar_value::<i64>().unwrap()).collect();
        assert_eq!(order, vec![0, 1, 3, 5, 9]);
        let mut f = Store::new(&QueueKind::Fifo);
        for t in ints(4) {
            f.push(t);
        }
        let got: Vec<Tuple> = (0..2).filter_map(|_| f.take()).collect();
        f.put_back(got);
        assert_eq!(drain(&mut f, 4), vec![0, 1, 2, 3]);
    }
}
