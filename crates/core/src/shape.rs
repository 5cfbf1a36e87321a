//! Concrete tensor shapes.

use crate::Status;

/// A fully known tensor shape (row-major dimensions).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Shape(pub Vec<usize>);

impl Shape {
    /// The scalar shape `[]`.
    pub fn scalar() -> Shape {
        Shape(Vec::new())
    }

    /// Builds a shape from dimensions.
    pub fn new(dims: impl Into<Vec<usize>>) -> Shape {
        Shape(dims.into())
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// Product of the dimensions (1 for a scalar). Callers that build shapes from untrusted
    /// input use [`Shape::checked_num_elements`].
    pub fn num_elements(&self) -> usize {
        self.0.iter().product()
    }

    /// Product of the dimensions, or InvalidArgument on overflow past 2^62.
    pub fn checked_num_elements(&self) -> Result<usize, Status> {
        let mut n: usize = 1;
        for &d in &self.0 {
            n = n
                .checked_mul(d)
                .filter(|n| *n < (1usize << 62))
                .ok_or_else(|| Status::invalid_argument(format!("shape {self} has too many elements")))?;
        }
        Ok(n)
    }

    /// Builds a shape from signed dimensions, rejecting negative (unknown) ones.
    pub fn from_i64(dims: &[i64]) -> Result<Shape, Status> {
        let mut out = Vec::with_capacity(dims.len());
        for &d in dims {
            if d < 0 {
                return Err(Status::invalid_argument(format!("dimension {d} in shape {dims:?} is negative")));
            }
            out.push(d as usize);
        }
        let s = Shape(out);
        s.checked_num_elements()?;
        Ok(s)
    }

    /// Dimensions as i64.
    pub fn to_i64(&self) -> Vec<i64> {
        self.0.iter().map(|&d| d as i64).collect()
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        let mut s = vec![1; self.0.len()];
        for i in (0..self.0.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * self.0[i + 1];
        }
        s
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            write!(f, "{d}")?;
        }
        write!(f, "]")
    }
}

impl From<Vec<usize>> for Shape {
    fn from(v: Vec<usize>) -> Shape {
        Shape(v)
    }
}

impl From<&[usize]> for Shape {
    fn from(v: &[usize]) -> Shape {
        Shape(v.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basics() {
        let s = Shape::new(vec![2, 3, 4]);
        assert_eq!(s.num_elements(), 24);
        assert_eq!(s.strides(), vec![12, 4, 1]);
        assert_eq!(s.to_string(), "[2,3,4]");
        assert_eq!(Shape::scalar().num_elements(), 1);
        assert!(Shape::from_i64(&[-1, 2]).is_err());
        assert!(Shape::from_i64(&[1 << 40, 1 << 40]).is_err());
    }
}
