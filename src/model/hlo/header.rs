//! What an HLO module text's header says about its entry parameters beyond the counts:
//! `input_output_alias` (which output reuses which parameter's buffer),
//! `buffer_donor` (parameters given to XLA to reuse as it likes), and an entry
//! parameter's `sharding={…}` as the tiles it makes per dimension.
//!
//! Owns: these data and pure look-ups of them; the grammar is `parse::hlo` (`tables` for
//! the header, `sharding` for the attribute).

use serde::Serialize;

/// One entry of `input_output_alias={ {OUT}: (PARAM, {INDEX}, KIND), … }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IoAlias {
    /// The output's shape index (`{0}`: the first element of the result tuple).
    pub output: Vec<u32>,
    /// The entry parameter's number.
    pub parameter: u32,
    /// The shape index within that parameter (`{}` for a whole array).
    pub parameter_index: Vec<u32>,
    /// `must-alias` rather than `may-alias`.
    pub must: bool,
}

/// One entry of `buffer_donor={ (PARAM, {INDEX}), … }`: a parameter XLA may reuse for any
/// output, which no alias of the header names yet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BufferDonor {
    pub parameter: u32,
    pub index: Vec<u32>,
}

/// A value's `sharding={…}` as the tiles it is cut into: `tiles[d]` pieces along dimension
/// `d`, every piece held by `replicas` devices (`tiles` all 1 and `replicas` = devices:
/// replicated). Read from either form XLA prints: `{devices=[2,1,2]<=[4]
/// last_tile_dim_replicate}` and Shardy's `{mesh['data'=2,'model'=2], [{'model'}, {}]}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tiling {
    /// Per dimension (empty for `{replicated}` and `{maximal …}`: any rank, no cut).
    pub tiles: Vec<u32>,
    /// Devices holding the same piece (`None` where the text does not say how many devices
    /// there are: `{replicated}`, which the module's device count completes).
    pub replicas: Option<u32>,
    /// The mesh's axes by name with their sizes (Shardy's form only), and the axes each
    /// dimension is cut along.
    pub axes: Vec<(String, u32)>,
    pub dim_axes: Vec<Vec<String>>,
    /// `{maximal device=N}` or `{manual}`: on one device, or left to the program.
    pub special: bool,
}

impl Tiling {
    /// Pieces the value is cut into (1: replicated).
    pub fn shards(&self) -> u64 {
        (self.tiles.iter()).fold(1u64, |p, &t| p.saturating_mul(u64::from(t.max(1))))
    }

    /// Whether no dimension is cut.
    pub fn is_replicated(&self) -> bool {
        !self.special && self.shards() == 1
    }
}
