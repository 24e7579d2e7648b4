#pragma once
// The kernel code's revision: part of the manifest hash (kernels/manifest.cpp), so that a
// database tuned on other kernel code says so. Only manifest.cpp includes this file.

namespace tunedreduce::kernels {

/// Bumped whenever kernel code changes in a way that changes results or performance.
/// 2: single_pass publishes partials in flagged slots (no fence); families tiled, streaming;
///    finish packed.
/// 3: an external completion counter (LaunchArgs::counter): the two-phase call launches no
///    memset; single_pass then finishes with an acq_rel ticket over plain partials.
/// 4: floating-point sums fold from -0.0 (a sum of only -0.0 is -0.0).
/// (The exact families came with revision 4: new ids, which change the manifest hash by
/// themselves. Bump it when the exact kernels' code changes their performance.)
/// 5: the exact first pass's warps take their tiles from a counter in shared memory, and its
///    finish rounds a narrow range of words on one lane (a3fe964: faster, the same bits).
/// 6: argmin and argmax (new ids); the single_pass finish reads a slot of more than two words
///    (their IndexedValue's four) with every word's load issued at once (3bb8c96).
/// 7: argmin and argmax fold each thread's 16-byte vectors with a tree of strict comparisons in
///    index order (fold_arg_vectors: no index compared, log-depth), the same results (7983e39).
/// 8: the half types' exact first pass issues the next tile's loads before this tile's adds,
///    fills the warp's last tile with -0s instead of adding it element by element, and counts
///    its tiles in 32 bits (0e2cf9b: faster at 2^22-2^27, the same bits).
/// 9: the bf16 exact round's spread test on the loaded words, two halves at once (packed 16-bit
///    min/max: add_bf16_round), the same bits (f17813d).
/// 10: the exact single_pass blocks add their words into an accumulator beside the ticket, and
///    the last block rounds that one row (finish_accumulated) instead of reading every block's
///    slot; the same bits (e0dd1a3).
/// 11: the segmented argmin / argmax fold each lane's vectors with the tree of revision 7, and
///    every segmented kernel writes an argmin / argmax result's 16 bytes whole (store_result:
///    no sector written in part); the same results.
/// 12: the split family cuts a segment into parts for a little less than half a wave of resident
///    blocks (was a whole wave): faster for few long segments, other bits (the partials' count).
inline constexpr int kernel_revision = 12;

}  // namespace tunedreduce::kernels
