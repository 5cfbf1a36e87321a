mod distributions;
mod guarded;
mod multinomial;
mod ops;
mod philox;
mod shuffle;
