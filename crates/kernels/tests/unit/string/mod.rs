mod farmhash;
mod kernels;
mod text;
