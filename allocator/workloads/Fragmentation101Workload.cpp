#include "allocator/workloads/Fragmentation101Workload.h"

#include "allocator/workloads/ProgramBuilder.h"

namespace allocscope::alloc {

std::string Fragmentation101Workload::summary() const {
    return "a hundred 10 MB tensors, every other freed, then 200 MB: free memory that cannot be used";
}

std::string Fragmentation101Workload::description() const {
    return "Fifty small tensors (4-28 KiB) land in one 2 MiB small-pool segment. A hundred 10 MB tensors "
           "follow: each 20 MiB segment holds two of them. Freeing every other one leaves about 477 MiB "
           "free, but in 9.5 MiB holes inside segments that still hold a live tensor, so the 200 MB "
           "request that follows needs a new 192 MiB segment: reserved memory peaks at 1194 MiB for "
           "1000 MiB of tensors. After the rest is freed, empty_cache() returns every whole free segment "
           "and the second 200 MB request gets a fresh segment. expandable_segments:True maps the same "
           "requests into one growing range instead; roundup_power2_divisions:4 rounds 10 MB to 10 MiB "
           "and gives every tensor its own segment. The default parameters issue exactly the requests "
           "of the shared frag101 trace (torch 2.11, H100).";
}

std::vector<ParamSpec> Fragmentation101Workload::params() const {
    return {
        ParamSpec::integer("small_tensors", 50, 0, 100000, "small tensors of 4096*(1 + i%7) bytes allocated first"),
        ParamSpec::integer("tensors", 100, 1, 100000, "number of equal tensors; every other one is freed"),
        ParamSpec::integer("tensor_bytes", 10'000'000, 1, 1ll << 40, "size of each of those tensors"),
        ParamSpec::integer("big_bytes", 200'000'000, 1, 1ll << 40, "the large request made after the frees"),
        ParamSpec::boolean("empty_cache", true, "call empty_cache() before the second large request"),
    };
}

GeneratedProgram Fragmentation101Workload::generate(const WorkloadParams& params, std::uint64_t /*seed*/) const {
    ProgramBuilder b("frag101.py");
    const std::uint32_t sSmall = b.stack("<listcomp>", 59, "w_frag101", 59);
    const std::uint32_t sXs = b.stack("<listcomp>", 60, "w_frag101", 60);
    const std::uint32_t sBig = b.stack("w_frag101", 63);
    const std::uint32_t sBig2 = b.stack("w_frag101", 67);

    const std::int64_t nSmall = params.getInt("small_tensors");
    const std::int64_t n = params.getInt("tensors");
    const auto bytes = static_cast<std::uint64_t>(params.getInt("tensor_bytes"));
    const auto big = static_cast<std::uint64_t>(params.getInt("big_bytes"));

    std::vector<std::uint64_t> small;
    b.begin("small tensors");
    for (std::int64_t i = 0; i < nSmall; ++i) small.push_back(b.alloc(4096ull * static_cast<std::uint64_t>(1 + i % 7), sSmall));
    b.end("small tensors");

    std::vector<std::uint64_t> xs;
    b.begin("allocate tensors");
    for (std::int64_t i = 0; i < n; ++i) xs.push_back(b.alloc(bytes, sXs));
    b.end("allocate tensors");

    b.begin("free every other");
    for (std::int64_t i = 0; i < n; i += 2) b.free(xs[static_cast<std::size_t>(i)]);
    b.end("free every other");

    b.begin("large request");
    const std::uint64_t bigId = b.alloc(big, sBig);
    b.free(bigId);
    b.end("large request");

    // `xs = None`: CPython drops a list's items from the last to the first.
    b.begin("free the rest");
    for (std::int64_t i = n - 1; i >= 0; --i) {
        if (i % 2 == 1) b.free(xs[static_cast<std::size_t>(i)]);
    }
    b.end("free the rest");

    b.begin("large request again");
    if (params.getBool("empty_cache")) b.emptyCache();
    const std::uint64_t big2 = b.alloc(big, sBig2);
    b.end("large request again");
    // `del big, small`: the tensor, then the list's items last to first.
    b.free(big2);
    for (auto it = small.rbegin(); it != small.rend(); ++it) b.free(*it);
    return b.take();
}

}  // namespace allocscope::alloc
