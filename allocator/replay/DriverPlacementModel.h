#pragma once
// A placement model of the real CUDA driver for what-if replays: where cudaMalloc and
// cuMemAddressReserve put a range. Only the relative order of same-size blocks changes the
// allocator's decisions, but the driver's rules are about addresses, so the model keeps them.
//
// - In the same step (same program event) and for the same size, the recorded run's driver
//   answer is the answer for the what-if too (its state is the same up to that point): a new
//   segment of n bytes takes an unused recorded segment_alloc of n bytes from its step.
//   Recorded addresses from *other* steps are not reused: the what-if's segments of that size
//   are a different set, and reusing them scrambled the order in train_gpt/msplit128.
//   A recorded segment of another size that opened a chunk in the step (base on a 32 MiB
//   boundary) answers too when the what-if's size needs a chunk as large: the driver in the same
//   state opens the same chunk (train_gpt rup4's first 96 MiB segment where 94 MiB was recorded).
// - Otherwise the driver's measured rules decide (DriverVaHeap: chunks of 32 MiB units, room in
//   the most recent live chunk first, released ranges, a heap growing down), over the ranges the
//   replay holds, recorded ones included. Without a recording the heap starts as a fresh
//   process's does; with an uncalibrated one, new chunks go below the recorded process's first
//   range.
// - A destroyed expandable reservation's base is handed to the next reservation; a new
//   reservation otherwise takes the step's recorded segment_map base, else a recorded one, else
//   the driver's reservation region (first fit going up).
// - With a recording of cudaMalloc segments, the heap is calibrated to it first
//   (HiddenRangeCalibration): it starts as the recorded process's fresh heap and takes the
//   hidden ranges the recording implies, each at its step. The recording's answers above are then
//   used only while the what-if's driver is in the recorded state (every live range is the
//   recording's own answer); once it is not, the calibrated rules answer alone.
//
// On the bare driver (tests/data/driver-placement, NVIDIA H200, driver 580.159.04) it places
// every range of the 6 held-out sequences at the driver's address relative to the first (565 of
// 565). A PyTorch process adds ranges nobody records (the runtime's, CUDA libraries', kernel
// loading), which the calibration infers; a what-if still counts the decisions that rest on
// modelled addresses (AddressTies). tests/benchmarks/README.md, "What-if placement: the driver model".
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "allocator/replay/DriverVaHeap.h"
#include "allocator/replay/HiddenRangeCalibration.h"
#include "allocator/replay/PlacementModel.h"
#include "allocator/replay/ReferencePlacement.h"

namespace allocscope::alloc {

class DriverPlacementModel : public PlacementModel {
public:
    explicit DriverPlacementModel(const RecordedTrace& recording);
    std::optional<std::uint64_t> place(const PlacementRequest& request, const std::map<std::uint64_t, std::uint64_t>& live,
                                       std::size_t step) override;

private:
    explicit DriverPlacementModel(const std::vector<StepSegmentEvent>& segmentEvents);
    std::optional<std::uint64_t> sameStep(const PlacementRequest& request, const std::map<std::uint64_t, std::uint64_t>& live,
                                          std::size_t step) const;
    std::optional<std::uint64_t> reservation(const PlacementRequest& request,
                                             const std::map<std::uint64_t, std::uint64_t>& live, std::size_t step);

    ReferencePlacement reference_;
    void restart();
    bool inRecordedState(const std::map<std::uint64_t, std::uint64_t>& live);
    std::uint64_t take(std::uint64_t address, std::uint64_t size);

    // The recording's hidden ranges (HiddenRangeCalibration); with them the heap starts as the
    // recorded process's fresh heap and the rules answer alone.
    std::optional<HiddenRangeCalibration> calibration_;
    std::size_t nextChange_ = 0;  // the calibration's first change not yet applied to heap_
    // Live bases that are the recording's own answer (its segment of that size, in that step).
    // While every live range is one, the what-if's driver is in the recorded state.
    std::set<std::uint64_t> recordedLive_;
    DriverVaHeap heap_;      // the driver's address space, as the replay has used it
    std::uint64_t start_ = 0;  // the recorded process's first range; 0 = no recording to reuse
    bool recorded_ = false;  // the recording has segment events to reuse
    std::size_t lastStep_ = 0;  // a step before it: another replay began (a process of its own)
    std::vector<std::uint64_t> releasedReservations_;       // bases of reservations that went away
    std::map<std::uint64_t, std::uint64_t> reservations_;  // reservations placed through this model
};

}  // namespace allocscope::alloc
