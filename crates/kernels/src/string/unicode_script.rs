//! `UnicodeScript` (`tf.strings.unicode_script`): the Unicode Script property of each int32
//! code point as ICU's `UScriptCode` number (0 Common, 1 Inherited, 25 Latin, 103 Unknown
//! for unassigned code points …), and -1 (`USCRIPT_INVALID_CODE`) outside 0..=0x10FFFF, as
//! TensorFlow gives. The property comes from a range table TensorFlow 2.21 produced once
//! (`unicode_script_ranges.txt`, scripts/golden/unicode_script.py).

use std::sync::OnceLock;

use ferroflow_core::{DataType, Status, Tensor};

use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpContext, OpKernel};

/// ICU's code for "not a code point".
const INVALID: i32 = -1;
const RANGES: &str = include_str!("unicode_script_ranges.txt");

/// `(first code point, script)` of every run, in increasing order.
fn table() -> &'static [(u32, i32)] {
    static TABLE: OnceLock<Vec<(u32, i32)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        RANGES
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let (cp, script) = l.split_once(' ')?;
                Some((u32::from_str_radix(cp, 16).ok()?, script.parse().ok()?))
            })
            .collect()
    })
}

/// The script of code point `cp` (-1 when it is not one).
pub fn script_of(cp: i32) -> i32 {
    let Ok(cp) = u32::try_from(cp) else { return INVALID };
    if cp > 0x10FFFF {
        return INVALID;
    }
    let t = table();
    let i = t.partition_point(|&(start, _)| start <= cp);
    i.checked_sub(1).map_or(INVALID, |i| t[i].1)
}

struct UnicodeScript;

impl OpKernel for UnicodeScript {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        if x.dtype() != DataType::Int32 {
            return Err(ctx.error(format!("input must be int32 code points, got {}", x.dtype())));
        }
        let out = collect_vec(x.dims(), x.as_slice::<i32>()?.iter().map(|&c| script_of(c)))?;
        ctx.set_output(0, Tensor::new(x.dims().to_vec(), out)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("UnicodeScript", |_| Ok(Box::new(UnicodeScript)));
}

#[cfg(test)]
mod tests {
    use super::{script_of, table};

    #[test]
    fn tensorflows_scripts() {
        // What scripts/golden/unicode_script.py printed from TensorFlow 2.21.
        let cps = [65, 0x416, 0x4e00, 0x300, 0xd800, 0xe000, 0x1f600, 0x10ffff];
        let want = [25, 8, 17, 1, 103, 103, 0, 103];
        assert_eq!(cps.map(script_of), want);
        assert_eq!([-1, -100, 0x110000, i32::MAX, i32::MIN].map(script_of), [-1; 5]);
        let t = table();
        assert_eq!(t.len(), 1587);
        assert_eq!(t[0], (0, 0));
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 != w[1].1));
    }
}
