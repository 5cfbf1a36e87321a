mod distributions;
mod guarded;
mod ops;
mod philox;
mod shuffle;
