//! [`wire_enum!`]: a TensorFlow enum whose variants are wire values, each listed once with
//! its value and its name — the enum, its `ALL` table and its `name()` come from one list.

/// Defines a `#[repr(i32)]` enum with, for each variant, its wire value and its name:
/// `ALL` holds every variant in the order listed, `name()` returns the variant's name
/// (documented by the attributes before `fn name;`) and `from_wire` finds the variant of
/// a wire value.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $ty:ident {
            $($variant:ident = $value:literal => $name:literal,)*
        }
        $(#[$name_doc:meta])*
        fn name;
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum $ty {
            $(#[doc = concat!("`", $name, "`")] $variant = $value,)*
        }

        impl $ty {
            /// Every variant, in the order of their wire values.
            pub const ALL: [$ty; [$($value),*].len()] = [$($ty::$variant),*];

            $(#[$name_doc])*
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)*
                }
            }

            /// The variant of a wire value, if there is one.
            fn from_wire(v: i32) -> Option<$ty> {
                $ty::ALL.iter().copied().find(|d| *d as i32 == v)
            }
        }
    };
}

pub(crate) use wire_enum;
