#include "DriverCorpus.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace replaytest {

namespace {

std::ifstream open(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot be read");
    return in;
}

std::runtime_error bad(const std::string& path, int line, const std::string& what) {
    return std::runtime_error(path + ":" + std::to_string(line) + ": " + what);
}

// Rank of `address` among the live ranges of `size` (how many lie below it).
int rankAmong(const std::map<std::string, std::uint64_t>& live, const std::map<std::string, std::uint64_t>& sizes,
              std::uint64_t size, std::uint64_t address, const std::string& self) {
    int rank = 0;
    for (const auto& [id, a] : live) {
        if (id != self && sizes.at(id) == size && a < address) ++rank;
    }
    return rank;
}

}  // namespace

std::vector<std::string> DriverCorpus::names(const std::string& dir) {
    std::ifstream in = open(dir + "/SEQUENCES.tsv");
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        out.push_back(line.substr(0, line.find('\t')));
    }
    return out;
}

DriverSequence DriverCorpus::load(const std::string& dir, const std::string& name) {
    DriverSequence s;
    s.name = name;
    {
        const std::string path = dir + "/SEQUENCES.tsv";
        std::ifstream in = open(path);
        std::string line;
        bool found = false;
        for (int n = 1; std::getline(in, line); ++n) {
            std::istringstream words(line);
            std::string seq, role;
            if (!(words >> seq >> role) || seq != name) continue;
            if (role != "fit" && role != "heldout") throw bad(path, n, "role must be fit or heldout, not '" + role + "'");
            s.heldOut = role == "heldout";
            found = true;
        }
        if (!found) throw std::runtime_error(path + ": no sequence " + name);
    }
    {
        const std::string path = dir + "/sequences/" + name + ".seq";
        std::ifstream in = open(path);
        std::string line;
        for (int n = 1; std::getline(in, line); ++n) {
            if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
            std::istringstream words(line);
            std::string op;
            if (!(words >> op)) continue;
            DriverCall c;
            c.op = op[0];
            if (!(words >> c.id)) throw bad(path, n, "no id");
            if (c.op == 'm' || c.op == 'r') words >> c.a;
            if (c.op == 'p' || c.op == 'u') words >> c.a >> c.b;
            if (op.size() != 1 || !words || std::string("mfrpux").find(c.op) == std::string::npos) throw bad(path, n, "bad call");
            s.calls.push_back(c);
        }
    }
    const std::string path = dir + "/measured/" + name + ".txt";
    std::ifstream in = open(path);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string key;
        words >> key;
        if (key == "nvidia-smi") {
            std::getline(words >> std::ws, s.nvidiaSmi);
        } else if (key == "gpu") {
            std::getline(words >> std::ws, s.gpu);
        } else if (key == "runs") {
            words >> s.runs;
        } else if (key == "distinct_relative") {
            words >> s.distinctRelative;
        } else if (key == "total") {
            words >> s.totalMemory;
        } else if (key == "m" || key == "r") {
            std::string id, address;
            std::uint64_t size = 0;
            if (!(words >> id >> size >> address)) throw bad(path, n, "expected '" + key + " ID SIZE 0xADDRESS'");
            s.measured[id] = std::stoull(address, nullptr, 16);
            s.sizes[id] = size;
        }
    }
    if (s.runs == 0 || s.gpu.empty() || s.nvidiaSmi.empty()) throw std::runtime_error(path + ": no runs, gpu or nvidia-smi line");
    return s;
}

PlacementScore DriverCorpus::score(const DriverSequence& sequence, allocscope::alloc::PlacementModel& model) {
    PlacementScore score;
    std::map<std::uint64_t, std::uint64_t> live;           // model: base -> size
    std::map<std::string, std::uint64_t> modelled;         // live id -> model address
    std::map<std::string, std::uint64_t> real;             // live id -> driver address
    std::optional<std::uint64_t> modelFirst;
    std::optional<std::uint64_t> realFirst;
    std::size_t step = 0;
    for (const DriverCall& c : sequence.calls) {
        ++step;
        if (c.op == 'm' || c.op == 'r') {
            const auto measured = sequence.measured.find(c.id);
            if (measured == sequence.measured.end()) throw std::runtime_error(sequence.name + ": " + c.id + " was not measured");
            allocscope::alloc::PlacementRequest request;
            request.kind = c.op == 'm' ? allocscope::alloc::PlacementRequest::Kind::Segment : allocscope::alloc::PlacementRequest::Kind::Reservation;
            request.size = sequence.sizes.at(c.id);
            request.pageSize = c.op == 'r' ? c.a : 0;
            const std::optional<std::uint64_t> placed = model.place(request, live, step);
            ++score.placements;
            if (!modelFirst && placed) modelFirst = *placed;
            if (!realFirst) realFirst = measured->second;
            // The first placement only fixes the origin (each process's base differs).
            if (score.placements > 1 && placed && *placed - *modelFirst == measured->second - *realFirst) ++score.exact;
            if (placed) {
                const bool others = std::any_of(real.begin(), real.end(), [&](const auto& r) {
                    return sequence.sizes.at(r.first) == request.size;
                });
                if (others) {
                    ++score.orderDecisions;
                    if (rankAmong(modelled, sequence.sizes, request.size, *placed, c.id) ==
                        rankAmong(real, sequence.sizes, request.size, measured->second, c.id)) {
                        ++score.orderRight;
                    }
                }
                live[*placed] = request.size;
                modelled[c.id] = *placed;
            }
            real[c.id] = measured->second;
        } else if (c.op == 'f' || c.op == 'x') {
            if (auto it = modelled.find(c.id); it != modelled.end()) {
                live.erase(it->second);
                modelled.erase(it);
            }
            real.erase(c.id);
        }
    }
    return score;
}

}  // namespace replaytest
