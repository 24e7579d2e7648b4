#pragma once
// The names of the registry's parameters as tables (common/enum_names.hpp): family_name,
// smem_mode_name, finish_name and their parse_* (kernels/registry.hpp) read these, and so do the
// messages and word lists that offer every name. Host only; no kernel includes it.

#include "common/enum_names.hpp"
#include "kernels/registry.hpp"

namespace tunedreduce::kernels {

inline constexpr auto family_names = enum_names<Family>({
    {Family::neighbored, "neighbored"},
    {Family::neighbored_less, "neighbored_less"},
    {Family::interleaved, "interleaved"},
    {Family::unroll, "unroll"},
    {Family::unroll_warps, "unroll_warps"},
    {Family::complete_unroll, "complete_unroll"},
    {Family::smem, "smem"},
    {Family::warp_shuffle, "warp_shuffle"},
    {Family::vectorized, "vectorized"},
    {Family::tiled, "tiled"},
    {Family::streaming, "streaming"},
    {Family::single_tile, "single_tile"},
    {Family::exact, "exact"},
    {Family::exact_wide, "exact_wide"},
    {Family::exact_registers, "exact_registers"},
});
static_assert(family_names.lists_all_through(Family::exact_registers));
static_assert(family_names.size() == std::size(all_families));

inline constexpr auto smem_mode_names = enum_names<SmemMode>({
    {SmemMode::none, "none"},
    {SmemMode::static_, "static"},
    {SmemMode::dynamic, "dynamic"},
});
static_assert(smem_mode_names.lists_all_through(SmemMode::dynamic));

inline constexpr auto finish_names = enum_names<Finish>({
    {Finish::two_pass, "two_pass"},
    {Finish::single_pass, "single_pass"},
    {Finish::packed, "packed"},
});
static_assert(finish_names.lists_all_through(Finish::packed));
static_assert(finish_names.size() == std::size(all_finishes));

}  // namespace tunedreduce::kernels
