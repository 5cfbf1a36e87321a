//! TensorFlow's quantized element types (`qint8`, `quint8`, `qint16`, `quint16`, `qint32`):
//! plain integers of a distinct dtype. They share the integer encodings on the wire
//! (`int_val`, little-endian `tensor_content`) and in checkpoints.

macro_rules! quantized {
    ($($(#[$doc:meta])* $name:ident($t:ty);)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name(pub $t);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    )*};
}

quantized! {
    /// DT_QINT8: a signed 8-bit quantized value.
    QInt8(i8);
    /// DT_QUINT8: an unsigned 8-bit quantized value.
    QUInt8(u8);
    /// DT_QINT16: a signed 16-bit quantized value.
    QInt16(i16);
    /// DT_QUINT16: an unsigned 16-bit quantized value.
    QUInt16(u16);
    /// DT_QINT32: a signed 32-bit quantized value.
    QInt32(i32);
}
