#pragma once
// The built-in cluster schedulers' registration lines, one per file (scheduler_*.cpp);
// register_builtin_cluster_schedulers() (scheduler.cpp) calls each once.

#include "sim/cluster/scheduler.hpp"

namespace hcsim::cluster_detail {

void add_fifo(Registry<ClusterScheduler>& r);
void add_backfill(Registry<ClusterScheduler>& r);
void add_srtf(Registry<ClusterScheduler>& r);
void add_priority(Registry<ClusterScheduler>& r);
void add_hetero(Registry<ClusterScheduler>& r);

}  // namespace hcsim::cluster_detail
