//! Parsing an Einsum equation against its operands' shapes: every subscript (letters, and
//! each dimension an ellipsis stands for) becomes a label id with one size.

use ferroflow_core::Status;

use crate::array::util::dims_str;

/// A parsed equation bound to operand shapes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spec {
    /// Label ids of each operand's dimensions, in order (repeats allowed: diagonals).
    pub inputs: Vec<Vec<usize>>,
    /// Label ids of the output's dimensions (repeats allowed: the result is inflated onto
    /// the diagonal, as TensorFlow does for the gradient of a trace).
    pub output: Vec<usize>,
    /// Size of each label (broadcast over ellipsis dimensions).
    pub sizes: Vec<usize>,
    /// Whether a label stands for an ellipsis dimension (may broadcast from 1).
    pub ellipsis: Vec<bool>,
}

/// One subscript term: `Some(letter)` or `None` for the ellipsis.
fn term(t: &str) -> Result<Vec<Option<char>>, String> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(ch) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("...") {
            if out.contains(&None) {
                return Err(format!("Found more than one ellipsis in subscript: {t}"));
            }
            out.push(None);
            rest = r;
        } else if ch.is_ascii_alphabetic() {
            out.push(Some(ch));
            rest = &rest[1..];
        } else {
            return Err(format!("Subscripts must be letters or an ellipsis, got '{ch}' in {t}"));
        }
    }
    Ok(out)
}

fn letter_id(ch: char) -> usize {
    if ch.is_ascii_lowercase() {
        ch as usize - 'a' as usize
    } else {
        26 + ch as usize - 'A' as usize
    }
}

/// Parses `equation` for operands of shapes `shapes`; errors are InvalidArgument messages.
pub(crate) fn parse(equation: &str, shapes: &[&[usize]]) -> Result<Spec, String> {
    let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let Some((lhs, rhs)) = eq.split_once("->").filter(|(_, r)| !r.contains("->")) else {
        return Err(format!("Expecting exactly one '->' in einsum equation: {equation}"));
    };
    let terms: Vec<Vec<Option<char>>> = lhs.split(',').map(term).collect::<Result<_, _>>()?;
    if terms.len() != shapes.len() {
        return Err(format!("Expecting {} inputs for equation {equation}, got {}", terms.len(), shapes.len()));
    }
    if terms.len() > 2 {
        return Err(format!("Expected either 1 or 2 input subscripts, but got: {}", terms.len()));
    }
    // Ellipsis ranks.
    let mut ell_rank = vec![0usize; terms.len()];
    for (i, (t, s)) in terms.iter().zip(shapes).enumerate() {
        let named = t.iter().filter(|l| l.is_some()).count();
        let has_ell = t.contains(&None);
        if s.len() < named || (!has_ell && s.len() != named) {
            return Err(format!(
                "Input {i} to einsum has rank {} but the subscript '{}' names {named} dimensions",
                s.len(),
                t.iter().map(|l| l.map_or("...".to_string(), |c| c.to_string())).collect::<String>()
            ));
        }
        ell_rank[i] = s.len() - named;
    }
    let max_ell = ell_rank.iter().copied().max().unwrap_or(0);
    // Ids 0..52 are letters; 52.. the ellipsis dimensions.
    let n_labels = 52 + max_ell;
    let mut sizes: Vec<Option<usize>> = vec![None; n_labels];
    let mut ellipsis = vec![false; n_labels];
    ellipsis[52..].iter_mut().for_each(|e| *e = true);
    let mut inputs = Vec::with_capacity(terms.len());
    for (i, (t, s)) in terms.iter().zip(shapes).enumerate() {
        let mut ids = Vec::with_capacity(s.len());
        for l in t {
            match l {
                Some(c) => ids.push(letter_id(*c)),
                None => ids.extend(52 + max_ell - ell_rank[i]..52 + max_ell),
            }
        }
        for (axis, (&id, &d)) in ids.iter().zip(s.iter()).enumerate() {
            match sizes[id] {
                None => sizes[id] = Some(d),
                Some(cur) if cur == d => {}
                Some(cur) if ellipsis[id] && (cur == 1 || d == 1) => sizes[id] = Some(cur.max(d)),
                Some(cur) => {
                    return Err(format!(
                        "Expected dimension {cur} at axis {axis} of input {i} shaped {} but got dimension {d}",
                        dims_str(s)
                    ))
                }
            }
        }
        inputs.push(ids);
    }
    let mut output = Vec::new();
    for l in term(rhs)? {
        match l {
            Some(c) => {
                let id = letter_id(c);
                if sizes[id].is_none() {
                    return Err(format!("Output subscript contains a label not present in the inputs: {c}"));
                }
                // A repeated output label puts the values on that diagonal (zeros elsewhere).
                output.push(id);
            }
            None => output.extend(52..52 + max_ell),
        }
    }
    Ok(Spec { inputs, output, sizes: sizes.into_iter().map(|s| s.unwrap_or(1)).collect(), ellipsis })
}

/// Checks of an Einsum equation's structure that need no shapes (for kernel creation).
pub(crate) fn check_equation(equation: &str) -> Result<(), Status> {
    let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    if eq.matches("->").count() != 1 {
        return Err(Status::invalid_argument(format!("Expecting exactly one '->' in einsum equation: {equation}")));
    }
    for t in eq.split("->").flat_map(|s| s.split(',')) {
        term(t).map_err(Status::invalid_argument)?;
    }
    Ok(())
}
