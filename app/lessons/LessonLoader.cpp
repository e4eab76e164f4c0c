#include "app/lessons/LessonLoader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/LessonMetrics.h"
#include "app/lessons/VerdictRule.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/JsonReader.h"

namespace allocscope::app {
namespace {

using formats::PyKind;
using formats::PyRef;
using formats::PyTree;

// Reads values out of the parsed tree, naming each by its key path and its line and column.
class Reader {
public:
    Reader(const PyTree& tree, std::string_view text, std::string file) : tree_(tree), text_(text), file_(std::move(file)) {}

    [[noreturn]] void fail(const std::string& what, PyRef at, const std::string& path) const {
        throw LessonError(what, file_ + ": " + path + " (" + lineColumn(tree_.node(at).offset) + ")");
    }
    [[noreturn]] void failPath(const std::string& what, const std::string& path) const {
        throw LessonError(what, file_ + ": " + path);
    }

    std::string lineColumn(std::uint64_t offset) const {
        std::size_t line = 1;
        std::size_t column = 1;
        for (std::size_t i = 0; i < offset && i < text_.size(); ++i) {
            if (text_[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        return "line " + std::to_string(line) + ", column " + std::to_string(column);
    }

    void requireDict(PyRef ref, const std::string& path) const {
        if (tree_.kind(ref) != PyKind::Dict) fail("expected an object, found " + std::string(PyTree::kindName(tree_.kind(ref))), ref, path);
    }
    // Rejects keys not in `allowed`: a misspelt key would otherwise be silently ignored.
    void onlyKeys(PyRef dict, const std::string& path, std::initializer_list<const char*> allowed) const {
        const auto& items = tree_.items(dict);
        for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
            const std::string& key = tree_.text(items[i]);
            if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
                std::string list;
                for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
                fail("unknown key '" + key + "' (expected one of: " + list + ")", items[i], join(path, key));
            }
        }
    }
    bool has(PyRef dict, const char* key) const {
        PyRef out = 0;
        return tree_.find(dict, key, out);
    }
    PyRef get(PyRef dict, const char* key, const std::string& path) const {
        PyRef out = 0;
        if (!tree_.find(dict, key, out)) fail("missing key '" + std::string(key) + "'", dict, path);
        return out;
    }
    std::string string(PyRef ref, const std::string& path, bool allowEmpty = false) const {
        if (tree_.kind(ref) != PyKind::Str) fail("expected a string, found " + std::string(PyTree::kindName(tree_.kind(ref))), ref, path);
        const std::string& s = tree_.text(ref);
        if (!allowEmpty && s.empty()) fail("must not be empty", ref, path);
        return s;
    }
    std::string field(PyRef dict, const char* key, const std::string& path, bool allowEmpty = false) const {
        return string(get(dict, key, path), join(path, key), allowEmpty);
    }
    std::int64_t integer(PyRef ref, const std::string& path, std::int64_t min, std::int64_t max) const {
        const formats::PyNode& n = tree_.node(ref);
        if (n.kind != PyKind::Int) fail("expected an integer, found " + std::string(PyTree::kindName(n.kind)), ref, path);
        const std::int64_t v = static_cast<std::int64_t>(n.bits);
        if ((!n.negative && n.bits > static_cast<std::uint64_t>(max)) || v < min || v > max) {
            fail("must be between " + std::to_string(min) + " and " + std::to_string(max), ref, path);
        }
        return v;
    }
    double number(PyRef ref, const std::string& path) const {
        const formats::PyNode& n = tree_.node(ref);
        if (n.kind == PyKind::Float) return tree_.floatValue(ref);
        if (n.kind == PyKind::Int) return n.negative ? static_cast<double>(static_cast<std::int64_t>(n.bits)) : static_cast<double>(n.bits);
        fail("expected a number, found " + std::string(PyTree::kindName(n.kind)), ref, path);
    }
    // A parameter value as the text a `--param k=v` would carry.
    std::string scalarText(PyRef ref, const std::string& path) const {
        const formats::PyNode& n = tree_.node(ref);
        switch (n.kind) {
            case PyKind::Str: return tree_.text(ref);
            case PyKind::Bool: return n.bits != 0 ? "true" : "false";
            case PyKind::Int: return n.negative ? std::to_string(static_cast<std::int64_t>(n.bits)) : std::to_string(n.bits);
            case PyKind::Float: {
                std::ostringstream out;
                out << tree_.floatValue(ref);
                return out.str();
            }
            default: fail("expected a string, number or boolean, found " + std::string(PyTree::kindName(n.kind)), ref, path);
        }
    }
    formats::PyItems list(PyRef ref, const std::string& path) const {
        if (tree_.kind(ref) != PyKind::List) fail("expected a list, found " + std::string(PyTree::kindName(tree_.kind(ref))), ref, path);
        return tree_.items(ref);
    }
    std::vector<std::pair<std::string, std::string>> params(PyRef ref, const std::string& path) const {
        requireDict(ref, path);
        std::vector<std::pair<std::string, std::string>> out;
        const auto& items = tree_.items(ref);
        for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
            const std::string& key = tree_.text(items[i]);
            out.emplace_back(key, scalarText(items[i + 1], join(path, key)));
        }
        return out;
    }
    double fraction(PyRef ref, const std::string& path) const {
        const double f = number(ref, path);
        if (!(f > 0.0 && f <= 1.0)) fail("a memory fraction must be in (0, 1]", ref, path);
        return f;
    }

    static std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
    static std::string index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

    const PyTree& tree() const { return tree_; }

private:
    const PyTree& tree_;
    std::string_view text_;
    std::string file_;
};

Outcome outcomeOf(const Reader& r, PyRef ref, const std::string& path) {
    const std::string s = r.string(ref, path);
    if (s == "true") return Outcome::True;
    if (s == "false") return Outcome::False;
    if (s == "depends") return Outcome::Depends;
    r.fail("an outcome is \"true\", \"false\" or \"depends\", not \"" + s + "\"", ref, path);
}

bool validId(const std::string& id) {
    if (id.empty() || !(std::isalpha(static_cast<unsigned char>(id[0])) || id[0] == '_')) return false;
    return std::all_of(id.begin(), id.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool validName(const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
}

bool validAt(const std::string& at) {
    if (at == "start" || at == "peak" || at == "oom" || at == "end") return true;
    for (const char* prefix : {"op:", "event:"}) {
        const std::string p(prefix);
        if (at.rfind(p, 0) == 0) {
            const std::string n = at.substr(p.size());
            return !n.empty() && n.size() < 19 && n.find_first_not_of("0123456789") == std::string::npos;
        }
    }
    return at.rfind("phase:", 0) == 0 && at.size() > 6;
}

void readProgram(const Reader& r, PyRef ref, const std::string& file, Lesson& lesson) {
    const std::string path = "program";
    r.requireDict(ref, path);
    r.onlyKeys(ref, path, {"workload", "params", "seed", "trace", "gpu", "memory_fraction", "config_only"});
    LessonProgram& p = lesson.program;
    const int kinds = int(r.has(ref, "workload")) + int(r.has(ref, "trace")) + int(r.has(ref, "config_only"));
    if (kinds != 1) r.fail("give exactly one of 'workload', 'trace' or 'config_only'", ref, path);
    if (r.has(ref, "workload")) {
        p.kind = LessonProgram::Kind::Workload;
        const PyRef w = r.get(ref, "workload", path);
        p.workload = r.string(w, path + ".workload");
        if (alloc::WorkloadRegistry::instance().find(p.workload) == nullptr) {
            try {
                alloc::WorkloadRegistry::instance().get(p.workload);
            } catch (const alloc::WorkloadError& e) {
                r.fail(e.what(), w, path + ".workload");
            }
        }
        if (r.has(ref, "params")) p.params = r.params(r.get(ref, "params", path), path + ".params");
        if (r.has(ref, "seed")) p.seed = static_cast<std::uint64_t>(r.integer(r.get(ref, "seed", path), path + ".seed", 0, INT64_MAX));
    } else if (r.has(ref, "trace")) {
        p.kind = LessonProgram::Kind::Trace;
        const PyRef t = r.get(ref, "trace", path);
        p.trace = r.string(t, path + ".trace");
        const std::filesystem::path base = std::filesystem::path(file).parent_path();
        const std::filesystem::path resolved = std::filesystem::path(p.trace).is_absolute() ? std::filesystem::path(p.trace) : base / p.trace;
        p.tracePath = resolved.lexically_normal().string();
        if (!std::filesystem::is_regular_file(p.tracePath)) r.fail("no trace file at " + p.tracePath, t, path + ".trace");
        for (const char* k : {"params", "seed"}) {
            if (r.has(ref, k)) r.fail(std::string("'") + k + "' applies to workloads, not to a trace", r.get(ref, k, path), path + "." + k);
        }
    } else {
        p.kind = LessonProgram::Kind::ConfigOnly;
        const PyRef c = r.get(ref, "config_only", path);
        if (r.tree().kind(c) != PyKind::Bool || r.tree().node(c).bits == 0) r.fail("'config_only' must be true", c, path + ".config_only");
    }
    if (r.has(ref, "gpu")) {
        const PyRef g = r.get(ref, "gpu", path);
        p.gpu = r.string(g, path + ".gpu");
        if (!alloc::findGpuPreset(p.gpu)) r.fail("unknown GPU preset '" + p.gpu + "' (`allocscope-cli gpus` lists them)", g, path + ".gpu");
    }
    if (r.has(ref, "memory_fraction")) p.memoryFraction = r.fraction(r.get(ref, "memory_fraction", path), path + ".memory_fraction");
}

void readRuns(const Reader& r, PyRef ref, Lesson& lesson) {
    const auto& items = r.list(ref, "runs");
    if (items.empty()) r.fail("a lesson needs at least one run", ref, "runs");
    for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string path = Reader::index("runs", i);
        const PyRef item = items[i];
        r.requireDict(item, path);
        r.onlyKeys(item, path, {"id", "label", "config", "params", "memory_fraction"});
        LessonRun run;
        const PyRef id = r.get(item, "id", path);
        run.id = r.string(id, path + ".id");
        if (!validId(run.id)) r.fail("a run id is a word of letters, digits and _ (it is used in rules as metric[" + run.id + "])", id, path + ".id");
        if (lesson.findRun(run.id) != nullptr) r.fail("two runs are called '" + run.id + "'", id, path + ".id");
        run.config = r.field(item, "config", path, true);
        run.label = r.has(item, "label") ? r.field(item, "label", path) : (run.config.empty() ? "default" : run.config);
        if (r.has(item, "params")) {
            if (lesson.program.kind != LessonProgram::Kind::Workload) r.fail("'params' needs a workload program", r.get(item, "params", path), path + ".params");
            run.params = r.params(r.get(item, "params", path), path + ".params");
        }
        if (r.has(item, "memory_fraction")) run.memoryFraction = r.fraction(r.get(item, "memory_fraction", path), path + ".memory_fraction");
        if (lesson.program.kind == LessonProgram::Kind::Workload) {
            // The parameters must resolve now: a lesson with a bad parameter never starts a run.
            std::vector<std::pair<std::string, std::string>> all = lesson.program.params;
            all.insert(all.end(), run.params.begin(), run.params.end());
            try {
                alloc::WorkloadRegistry::instance().get(lesson.program.workload).resolve(all);
            } catch (const alloc::WorkloadError& e) {
                r.fail(std::string(e.what()) + " (" + e.where() + ")", item, path + ".params");
            }
        }
        lesson.runs.push_back(std::move(run));
    }
}

void readVerdict(const Reader& r, PyRef ref, const std::string& fileName, Lesson& lesson) {
    const std::string path = "verdict";
    r.requireDict(ref, path);
    r.onlyKeys(ref, path, {"rules", "otherwise", "texts"});
    VerdictRule::Names names;
    names.metricKind = [&lesson](const std::string& metric) {
        const char kind = LessonMetrics::kind(metric);
        // A config-only lesson runs nothing: only the config metrics exist.
        if (lesson.program.kind == LessonProgram::Kind::ConfigOnly && metric.rfind("config", 0) != 0) return '\0';
        return kind;
    };
    for (const LessonRun& run : lesson.runs) names.runs.push_back(run.id);
    std::set<Outcome> reachable;
    const auto& rules = r.list(r.get(ref, "rules", path), path + ".rules");
    if (rules.empty()) r.fail("at least one rule is needed", ref, path + ".rules");
    for (std::size_t i = 0; i < rules.size(); ++i) {
        const std::string rp = Reader::index(path + ".rules", i);
        r.requireDict(rules[i], rp);
        r.onlyKeys(rules[i], rp, {"when", "outcome"});
        LessonRule rule;
        rule.when = r.field(rules[i], "when", rp);
        rule.where = fileName + ": " + rp + ".when";
        rule.outcome = outcomeOf(r, r.get(rules[i], "outcome", rp), rp + ".outcome");
        VerdictRule::parse(rule.when, names, rule.where);  // throws with the column
        reachable.insert(rule.outcome);
        lesson.rules.push_back(std::move(rule));
    }
    lesson.otherwise = outcomeOf(r, r.get(ref, "otherwise", path), path + ".otherwise");
    reachable.insert(lesson.otherwise);
    const PyRef texts = r.get(ref, "texts", path);
    r.requireDict(texts, path + ".texts");
    r.onlyKeys(texts, path + ".texts", {"true", "false", "depends"});
    for (Outcome o : reachable) {
        const char* key = outcomeName(o);
        std::string& target = o == Outcome::True ? lesson.textTrue : o == Outcome::False ? lesson.textFalse : lesson.textDepends;
        target = r.field(texts, key, path + ".texts");
    }
}

void readSteps(const Reader& r, PyRef ref, Lesson& lesson) {
    const auto& items = r.list(ref, "steps");
    static const std::set<std::string> kViews = {"segments", "heatmap", "timeline", "summary", "compare"};
    for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string path = Reader::index("steps", i);
        r.requireDict(items[i], path);
        r.onlyKeys(items[i], path, {"text", "run", "at", "view", "block_op"});
        LessonStep step;
        step.text = r.field(items[i], "text", path);
        if (r.has(items[i], "run")) {
            const PyRef run = r.get(items[i], "run", path);
            step.run = r.string(run, path + ".run");
            if (lesson.findRun(step.run) == nullptr) r.fail("no run '" + step.run + "' in this lesson", run, path + ".run");
        }
        if (r.has(items[i], "at")) {
            const PyRef at = r.get(items[i], "at", path);
            step.at = r.string(at, path + ".at");
            if (!validAt(step.at)) r.fail("'at' is start, peak, oom, end, op:N, event:N or phase:NAME, not '" + step.at + "'", at, path + ".at");
        }
        if (r.has(items[i], "view")) {
            const PyRef view = r.get(items[i], "view", path);
            step.view = r.string(view, path + ".view");
            if (kViews.count(step.view) == 0) r.fail("unknown view '" + step.view + "' (segments, heatmap, timeline, summary, compare)", view, path + ".view");
        }
        if (r.has(items[i], "block_op")) {
            step.blockOp = static_cast<std::uint64_t>(r.integer(r.get(items[i], "block_op", path), path + ".block_op", 0, INT64_MAX));
        }
        if (lesson.program.kind == LessonProgram::Kind::ConfigOnly && (!step.view.empty() || step.blockOp)) {
            r.fail("a config-only lesson has no run to show", items[i], path);
        }
        lesson.steps.push_back(std::move(step));
    }
}

}  // namespace

Lesson LessonLoader::loadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw LessonError("cannot read the lesson file", path);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return parse(buffer.str(), path);
}

Lesson LessonLoader::parse(std::string_view text, const std::string& path) {
    PyTree tree;
    try {
        tree = formats::JsonReader::read(text);
    } catch (const formats::FormatError& e) {
        throw LessonError("not valid JSON: " + e.problem(), path + ": " + e.location());
    }
    const std::string file = std::filesystem::path(path).filename().string();
    Reader r(tree, text, file);
    const PyRef root = tree.root;
    r.requireDict(root, "the top level");
    r.onlyKeys(root, "", {"name", "number", "title", "question", "claim", "program", "runs", "show", "verdict", "steps"});
    Lesson lesson;
    lesson.file = path;
    const PyRef name = r.get(root, "name", "the top level");
    lesson.name = r.string(name, "name");
    if (!validName(lesson.name)) r.fail("a lesson name uses only a-z, 0-9 and '-'", name, "name");
    lesson.number = static_cast<int>(r.integer(r.get(root, "number", "the top level"), "number", 1, 9999));
    lesson.title = r.field(root, "title", "");
    lesson.question = r.field(root, "question", "");
    lesson.claim = r.field(root, "claim", "");
    readProgram(r, r.get(root, "program", "the top level"), path, lesson);
    readRuns(r, r.get(root, "runs", "the top level"), lesson);
    if (r.has(root, "show")) {
        const auto& items = r.list(r.get(root, "show", ""), "show");
        for (std::size_t i = 0; i < items.size(); ++i) {
            const std::string metric = r.string(items[i], Reader::index("show", i));
            if (LessonMetrics::kind(metric) == 0) r.fail("unknown metric '" + metric + "'", items[i], Reader::index("show", i));
            lesson.show.push_back(metric);
        }
    }
    readVerdict(r, r.get(root, "verdict", "the top level"), file, lesson);
    if (r.has(root, "steps")) readSteps(r, r.get(root, "steps", ""), lesson);
    return lesson;
}

}  // namespace allocscope::app
