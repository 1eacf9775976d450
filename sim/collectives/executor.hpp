#pragma once
// Reference executor: runs a Schedule on real buffers (one Eigen vector per rank) so that
// tests can prove an algorithm computes the true sum / gather / scatter (design.md,
// "Reference kernels": collective algorithms run on real buffers).
//
// Semantics of a step: every transfer reads its source as it was when the step began
// (the transfers of a step are concurrent), then all are applied; `reduce` adds into the
// destination, otherwise the destination is overwritten. A schedule whose step writes one
// element twice without reducing, or reads/writes outside a buffer, is malformed.

#include <string>
#include <vector>

#include <Eigen/Core>

#include "sim/collectives/schedule.hpp"

namespace hcsim {

// Runs `sc` in place; returns "" on success or what is malformed about the schedule.
std::string execute_schedule(const Schedule& sc, std::vector<Eigen::VectorXd>& buffers);

// What each rank must hold after `op` on `inputs` (see schedule.hpp); elements a rank's
// result leaves unspecified (e.g. the other chunks after a reduce-scatter) are NaN.
std::vector<Eigen::VectorXd> expected_result(CollectiveOp op, const std::vector<Eigen::VectorXd>& inputs, int root = 0);

}  // namespace hcsim
