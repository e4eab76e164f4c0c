#include "allocator/compare/CompareReport.h"

#include <cstdio>
#include <sstream>

namespace allocscope::alloc {

std::string CompareReport::mib(std::uint64_t bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(bytes) / 1048576.0);
    return buf;
}

std::string CompareReport::jsonString(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

namespace {
std::string pct(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}
std::string ms(double us) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", us / 1000.0);
    return buf;
}
std::string pad(const std::string& s, std::size_t width, bool right) {
    if (s.size() >= width) return s;
    return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// " (window)" after a window-only figure of a run over a truncated history, "" otherwise.
// (Appended, not `" " + std::string(...)`: g++ 12 -O3 can flag that with a false -Wrestrict.)
std::string mark(const WindowFigures* window) { return window ? std::string(" ").append(WindowFigures::kMark) : std::string(); }
}  // namespace

std::string CompareReport::table(const std::vector<RunMetrics>& runs, const WindowFigures* window) {
    // Columns by the JSON figure they show ("" = the config), so the window's list decides the marks.
    const std::vector<std::pair<std::string, std::string>> columns = {
        {"config", ""},           {"peak alloc MiB", "peak_allocated"}, {"peak reserved MiB", "peak_reserved"},
        {"stranded@peak MiB", "at_peak"}, {"frag@peak", "at_peak"},   {"releasable@end MiB", "at_end"},
        {"cudaMalloc", "cuda_malloc"}, {"cudaFree", "cuda_free"},     {"map", "map"},
        {"unmap", "unmap"},       {"retries", "retries"},              {"OOMs", "ooms"},
        {"est. alloc ms", "estimated_allocator_us"}};
    std::vector<std::string> head;
    for (const auto& [title, figure] : columns) head.push_back(title + (WindowFigures::isWindowOnly(figure) ? mark(window) : ""));
    std::vector<std::vector<std::string>> rows;
    for (const RunMetrics& r : runs) {
        const bool frag = r.atPeak.has_value();
        rows.push_back({r.label, mib(r.peakAllocated), mib(r.peakReserved), frag ? mib(r.atPeak->strandedFree) : "-",
                        frag ? pct(r.atPeak->fragmentation) : "-", r.atEnd ? mib(r.atEnd->releasable) : "-",
                        std::to_string(r.cudaMallocs), std::to_string(r.cudaFrees), std::to_string(r.maps),
                        std::to_string(r.unmaps), std::to_string(r.retries),
                        r.ooms.empty() ? "0" : std::to_string(r.ooms.size()) + " @op " + std::to_string(r.ooms.front().opIndex),
                        ms(r.allocatorUs) + (r.error ? "  (stopped: invalid op)" : "")});
    }
    std::vector<std::size_t> width(head.size());
    for (std::size_t c = 0; c < head.size(); ++c) {
        width[c] = head[c].size();
        for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
    }
    std::ostringstream out;
    for (std::size_t c = 0; c < head.size(); ++c) out << (c ? "  " : "") << pad(head[c], width[c], c != 0);
    out << "\n";
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "  " : "") << pad(row[c], width[c], c != 0);
        out << "\n";
    }
    if (window) out << window->legend() << "\n";
    return out.str();
}

std::string CompareReport::details(const RunMetrics& r, const WindowFigures* window) {
    const std::string w = mark(window);
    std::ostringstream out;
    out << "config:            " << r.label << (r.asyncBackend ? "  (cudaMallocAsync model)" : "") << "\n"
        << "ops:               " << r.ops << " (" << r.allocFreeOps << " alloc/free), " << r.events << " allocator events" << w << "\n"
        << "peak allocated:    " << r.peakAllocated << " B (" << mib(r.peakAllocated) << " MiB)" << w << "\n"
        << "peak reserved:     " << r.peakReserved << " B (" << mib(r.peakReserved) << " MiB) at op " << r.peakReservedOp << w << "\n"
        << "final allocated:   " << r.finalAllocated << " B, final reserved: " << r.finalReserved << " B\n";
    auto frag = [&](const char* name, const std::optional<FragmentationMetrics>& f, const std::string& m) {
        if (!f) return;
        out << name << "rounding loss " << mib(f->roundingLoss) << " MiB, stranded free " << mib(f->strandedFree)
            << " MiB, 1 - largest/total free " << pct(f->fragmentation) << " (" << mib(f->largestFree) << " of "
            << mib(f->totalFree) << " MiB), releasable " << mib(f->releasable) << " MiB" << m << "\n";
    };
    frag("at peak:           ", r.atPeak, w);
    frag("at end:            ", r.atEnd, "");
    out << "driver calls:      cudaMalloc " << r.cudaMallocs << ", cudaFree " << r.cudaFrees << " (gc " << r.gcReleases
        << "), map " << r.maps << ", unmap " << r.unmaps << "; retries " << r.retries << w << "\n"
        << "est. allocator:    " << ms(r.allocatorUs) << " ms" << w << " (H100 calibration; map/unmap = one cudaMalloc each)\n";
    for (const RunOom& oom : r.ooms) out << "OOM" << w << " at op " << oom.opIndex << ": " << oom.message << "\n";
    if (r.error) out << "stopped: " << *r.error << "\n";
    if (window) out << window->legend() << "\n";
    return out.str();
}

namespace {
void fragJson(std::ostringstream& out, const char* key, const std::optional<FragmentationMetrics>& f) {
    out << ",\"" << key << "\":";
    if (!f) {
        out << "null";
        return;
    }
    out << "{\"reserved\":" << f->reserved << ",\"allocated\":" << f->allocated << ",\"rounding_loss\":" << f->roundingLoss
        << ",\"stranded_free\":" << f->strandedFree << ",\"total_free\":" << f->totalFree << ",\"largest_free\":"
        << f->largestFree << ",\"fragmentation\":" << f->fragmentation << ",\"releasable\":" << f->releasable << "}";
}
}  // namespace

std::string CompareReport::json(const ProgramInfo& program, const CompareDevice& device,
                                const std::vector<RunMetrics>& runs, const WindowFigures* window) {
    std::ostringstream out;
    out << "{\"program\":{\"name\":" << jsonString(program.name) << ",\"params\":" << jsonString(program.params)
        << ",\"seed\":" << program.seed << "},\"device\":{\"name\":" << jsonString(device.name)
        << ",\"total_memory\":" << device.totalMemory << ",\"other_memory\":" << device.otherMemory
        << ",\"memory_fraction\":";
    if (device.memoryFraction) {
        out << *device.memoryFraction;
    } else {
        out << "null";
    }
    // Before the runs, so that a reader meets it before the figures it qualifies.
    out << "},\"window\":" << (window ? window->json() : std::string("null")) << ",\"runs\":[";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const RunMetrics& r = runs[i];
        out << (i ? "," : "") << "\n{\"label\":" << jsonString(r.label) << ",\"config\":" << jsonString(r.configText)
            << ",\"async_model\":" << (r.asyncBackend ? "true" : "false") << ",\"ops\":" << r.ops
            << ",\"events\":" << r.events << ",\"peak_allocated\":" << r.peakAllocated << ",\"peak_reserved\":"
            << r.peakReserved << ",\"peak_reserved_op\":" << r.peakReservedOp << ",\"final_allocated\":"
            << r.finalAllocated << ",\"final_reserved\":" << r.finalReserved;
        fragJson(out, "at_peak", r.atPeak);
        fragJson(out, "at_end", r.atEnd);
        out << ",\"cuda_malloc\":" << r.cudaMallocs << ",\"cuda_free\":" << r.cudaFrees << ",\"gc_releases\":"
            << r.gcReleases << ",\"map\":" << r.maps << ",\"unmap\":" << r.unmaps << ",\"retries\":" << r.retries
            << ",\"estimated_allocator_us\":" << r.allocatorUs << ",\"ooms\":[";
        for (std::size_t k = 0; k < r.ooms.size(); ++k) {
            out << (k ? "," : "") << "{\"op\":" << r.ooms[k].opIndex << ",\"message\":" << jsonString(r.ooms[k].message) << "}";
        }
        out << "],\"error\":" << (r.error ? jsonString(*r.error) : "null") << "}";
    }
    out << "\n]}\n";
    return out.str();
}

std::string CompareReport::recommendation(const Recommendation& rec, const WindowFigures* window) {
    const std::string w = mark(window);
    std::ostringstream out;
    std::vector<RunMetrics> runs;
    for (const auto& c : rec.candidates) runs.push_back(c.metrics);
    out << table(runs, window) << "\n";
    // Found by running the window: the whole run may need more (its peak may be higher); a
    // window that OOMs even on the full device says so of the whole run too.
    out << "smallest GPU without an OOM (total memory, binary search)" << w << ":\n";
    for (const auto& c : rec.candidates) {
        out << "  " << pad(c.config.label, 60, false) << "  "
            << (c.minTotalMemory ? mib(*c.minTotalMemory) + " MiB" + w : std::string("OOMs even on the full device")) << "\n";
    }
    if (!rec.chosen) {
        out << "\nno config runs without an OOM on this device\n";
        return out.str();
    }
    const auto& best = rec.candidates[*rec.chosen];
    out << "\nrecommended: " << (best.config.label == "default" ? std::string("(default: leave PYTORCH_CUDA_ALLOC_CONF unset)")
                                                               : "PYTORCH_CUDA_ALLOC_CONF=" + best.config.label)
        << "\n  peak reserved " << mib(best.metrics.peakReserved) << " MiB" << w << ", lowest of the grid "
        << mib(rec.lowestPeakReserved) << " MiB" << w << " (margin " << pct(rec.margin * 100.0) << " %); "
        << best.complexity << " option(s) set\n";
    for (const auto& c : rec.candidates) {
        if (c.metrics.asyncBackend && c.metrics.peakReserved < rec.lowestPeakReserved && !c.metrics.oom()) {
            out << "  (" << c.config.label << " reaches " << mib(c.metrics.peakReserved)
                << " MiB" << w << " in the async-backend model, which is an estimate, not a recommendation)\n";
        }
    }
    return out.str();
}

}  // namespace allocscope::alloc
