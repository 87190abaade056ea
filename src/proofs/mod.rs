//! Filecoin proof kinds mapped onto circuits: which circuit each registered proof uses, where
//! its parameters live, and (later) how requests become per-partition circuits.

pub mod circuits;
pub mod params;
