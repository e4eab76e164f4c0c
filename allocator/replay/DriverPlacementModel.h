#pragma once
// A placement model of the real CUDA driver, fitted to the segment addresses in the recorded
// traces (reference §18.3), for what-if replays: where cudaMalloc and cuMemAddressReserve put a
// range. Only the relative order of same-size blocks changes the allocator's decisions, so the
// model aims at the order, not at the exact addresses.
//
// What the traces show, and what the model does with it:
// - In the same step (same program event) and for the same size, the recorded run's driver
//   answer is the answer for the what-if too (its state is the same up to that point): a new
//   segment of n bytes takes an unused recorded segment_alloc of n bytes from its step.
//   Recorded addresses from *other* steps are not reused: the what-if's segments of that size
//   are a different set, and reusing them scrambled the order in train_gpt/msplit128.
// - Otherwise a range of at most 24 MiB fills the best-fitting free gap between live ranges
//   (the driver packs 12 and 24 MiB segments into the slack after larger ones: 12 MiB after a
//   20 MiB segment in its 32 MiB chunk, 24 MiB after a 36 MiB one);
// - a larger range (or a small one that fits no gap) goes below everything handed out so far,
//   its base aligned down to 32 MiB (large segments come back 32 MiB apart going down).
// - A destroyed expandable reservation's base is handed to the next reservation; a new
//   reservation otherwise takes the step's recorded segment_map base, else a recorded one.
//
// Measured on the shared traces (W__default replayed under C, 9 pairs): every memory_stats() key
// on 8 of 9 (the reference model: 6 of 9), peak reserved on 9 of 9. train_gpt rup4 is not
// reached: there the real driver put the three 12 MiB segments of steps 78/79/82 in the order
// 2nd < 3rd < 1st (940 / 106 / 118 MiB from the first segment), next to invisible allocations
// of the process, which neither the recording under defaults nor a gap rule predicts.
//
// Measured on a GPU (tests/data/driver-placement, NVIDIA H200, driver 580.159.04): the bare
// driver is deterministic (18 call sequences, 5 fresh processes each: the same addresses relative
// to each process's first); a PyTorch process is not (train_gpt, run again, orders 6-11 of its
// 67-81 new segments differently among same-size ones), yet its 122 memory_stats() keys did not
// move in any of 36 runs, and the 2nd < 3rd < 1st order above held in all 7 recordings of
// train_gpt rup4: that miss is the model's. The process's other users of the driver (CUDA
// libraries, kernel loading) shape the holes the driver fills, and this model scores 283 of 396
// same-size orders of the bare driver's held-out sequences, so it was not refitted to them; the
// replay counts the decisions that rest on its guesses instead (AddressTies).
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "allocator/replay/PlacementModel.h"
#include "allocator/replay/ReferencePlacement.h"

namespace allocscope::alloc {

class DriverPlacementModel : public PlacementModel {
public:
    explicit DriverPlacementModel(const RecordedTrace& recording);
    std::optional<std::uint64_t> place(const PlacementRequest& request, const std::map<std::uint64_t, std::uint64_t>& live,
                                       std::size_t step) override;

    static constexpr std::uint64_t kGapFillLimit = 24ull << 20;  // larger ranges never fill gaps

private:
    std::optional<std::uint64_t> sameStep(const PlacementRequest& request, const std::map<std::uint64_t, std::uint64_t>& live,
                                          std::size_t step) const;
    std::uint64_t fresh(std::uint64_t size, const std::map<std::uint64_t, std::uint64_t>& live);
    std::optional<std::uint64_t> reservation(const PlacementRequest& request,
                                             const std::map<std::uint64_t, std::uint64_t>& live, std::size_t step);

    ReferencePlacement reference_;
    std::uint64_t start_ = 0;     // the recorded process's first range
    std::uint64_t frontier_ = 0;  // lowest base handed out so far (recorded or modelled); 0 = none
    std::vector<std::uint64_t> releasedReservations_;       // bases of reservations that went away
    std::map<std::uint64_t, std::uint64_t> reservations_;  // reservations placed through this model
};

}  // namespace allocscope::alloc
