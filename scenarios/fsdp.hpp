#pragma once
// strategy.fsdp: how ZeRO-3 / FSDP shards and gathers (workloads/strategy.hpp: ShardingSpec),
// from a framework preset and overrides of its keys (sections::fsdp()).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "workloads/strategy.hpp"

namespace hcsim {

struct ShardingPreset {
  std::string_view name;
  ShardingSpec spec;
  std::string_view source;
};

// The presets in name order (the choices of strategy.fsdp.preset).
const std::vector<ShardingPreset>& sharding_presets();

// strategy.fsdp at `path` resolved over its preset for strategy `st` (its zero stage and
// data-parallel ranks: the block applies to zero 3, a shard group divides dp * cp); problems
// go to `diag`. Null: the default preset (pytorch-fsdp2). With `resolved`, the block with
// its preset and every key stated (the resolved scenario's strategy.fsdp) is stored there.
ShardingSpec resolve_sharding(const nlohmann::json& v, const std::string& path, const StrategySpec& st,
                              Diagnostics& diag, nlohmann::json* resolved = nullptr);

}  // namespace hcsim
