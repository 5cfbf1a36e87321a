//! Colocation groups: a union-find over a graph's nodes that keeps, per group, a few
//! reasons why its members are together (for the placer's error messages).

/// Disjoint sets of node indices.
pub(super) struct UnionFind {
    parent: Vec<usize>,
    /// Why the members of a group (indexed by root) are together; a few reasons kept.
    pub(super) reasons: Vec<Vec<String>>,
}

impl UnionFind {
    pub(super) fn new(n: usize) -> Self {
        UnionFind { parent: (0..n).collect(), reasons: vec![Vec::new(); n] }
    }

    pub(super) fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    pub(super) fn union(&mut self, a: usize, b: usize, why: impl FnOnce() -> String) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return;
        }
        let (keep, gone) = if ra < rb { (ra, rb) } else { (rb, ra) };
        self.parent[gone] = keep;
        let moved = std::mem::take(&mut self.reasons[gone]);
        let r = &mut self.reasons[keep];
        r.extend(moved);
        r.push(why());
        r.truncate(4);
    }
}
