use ferroflow_kernels::io::varint::{get_fixed32, get_varint32};

#[test]
fn bounds() {
    let mut p = 0;
    assert_eq!(get_varint32(&[0xff, 0xff, 0xff, 0xff, 0x0f], &mut p), Some(u32::MAX));
    let mut p = 0;
    assert_eq!(get_varint32(&[0xff, 0xff, 0xff, 0xff, 0x7f], &mut p), None);
    let mut p = 0;
    assert_eq!(get_varint32(&[0x80], &mut p), None);
    assert_eq!(get_fixed32(&[1, 0, 0, 0], 0), Some(1));
    assert_eq!(get_fixed32(&[9, 1, 0, 0, 0], 1), Some(1));
    assert_eq!(get_fixed32(&[1, 0, 0], 0), None);
    assert_eq!(get_fixed32(&[1, 0, 0, 0], usize::MAX), None);
}
