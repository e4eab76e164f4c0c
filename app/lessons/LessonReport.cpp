#include "app/lessons/LessonReport.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "allocator/compare/CompareReport.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/LessonMetrics.h"
#include "app/lessons/VerdictRule.h"

namespace allocscope::app {
namespace {

std::string q(const std::string& s) { return alloc::CompareReport::jsonString(s); }

std::string pad(const std::string& s, std::size_t width) { return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' '); }

std::string number(double v) {
    char buf[64];
    if (v == static_cast<double>(static_cast<long long>(v)) && v < 9.0e15 && v > -9.0e15) {
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    } else {
        std::snprintf(buf, sizeof buf, "%.6g", v);
    }
    return buf;
}

}  // namespace

std::vector<std::string> LessonReport::shownMetrics(const Lesson& lesson) {
    std::vector<std::string> out = lesson.show;
    VerdictRule::Names names;
    names.metricKind = LessonMetrics::kind;
    for (const LessonRun& r : lesson.runs) names.runs.push_back(r.id);
    for (const LessonRule& rule : lesson.rules) {
        for (const auto& ref : VerdictRule::parse(rule.when, names, rule.where).references()) {
            if (std::find(out.begin(), out.end(), ref.first) == out.end()) out.push_back(ref.first);
        }
    }
    return out;
}

std::string LessonReport::verdictWord(Outcome outcome) {
    switch (outcome) {
        case Outcome::True: return "TRUE";
        case Outcome::False: return "FALSE";
        case Outcome::Depends: return "IT DEPENDS";
    }
    return "?";
}

std::string LessonReport::programLine(const LessonResult& result) {
    const LessonProgram& p = result.lesson.program;
    std::string line;
    if (p.kind == LessonProgram::Kind::ConfigOnly) return "no program: PyTorch's reading of each config string";
    if (p.kind == LessonProgram::Kind::Workload) {
        line = "workload " + p.workload;
        if (!p.params.empty()) {
            line += " (";
            for (std::size_t i = 0; i < p.params.size(); ++i) line += (i ? "," : "") + p.params[i].first + "=" + p.params[i].second;
            line += ")";
        }
    } else {
        line = "PyTorch trace " + p.trace + " (recorded with torch 2.11 on an H100)";
    }
    if (!result.runs.empty()) line += " on " + result.runs.front().gpu;
    if (p.memoryFraction) line += ", memory fraction " + number(*p.memoryFraction);
    return line;
}

std::string LessonReport::text(const LessonResult& result) {
    const Lesson& lesson = result.lesson;
    std::ostringstream out;
    out << lesson.number << ". " << lesson.name << ": " << lesson.title << "\n";
    out << "Question: " << lesson.question << "\n";
    out << "Claim:    " << lesson.claim << "\n";
    out << "Program:  " << programLine(result) << "\n\n";
    if (result.cancelled) return out.str() + "Cancelled before every run was done: no verdict.\n";
    const std::vector<std::string> metrics = shownMetrics(lesson);
    std::size_t labelWidth = 10;
    for (const std::string& m : metrics) labelWidth = std::max(labelWidth, LessonMetrics::label(m).size() + 2);
    std::vector<std::size_t> widths;
    for (const LessonRunResult& r : result.runs) {
        std::size_t w = r.label.size() + 2;
        for (const std::string& m : metrics) w = std::max(w, LessonMetrics::format(m, r).size() + 2);
        widths.push_back(std::max<std::size_t>(w, 12));
    }
    out << pad("", labelWidth);
    for (std::size_t i = 0; i < result.runs.size(); ++i) out << pad(result.runs[i].label, widths[i]);
    out << "\n" << pad("run id", labelWidth);
    for (std::size_t i = 0; i < result.runs.size(); ++i) out << pad(result.runs[i].id, widths[i]);
    out << "\n";
    for (const std::string& m : metrics) {
        out << pad(LessonMetrics::label(m), labelWidth);
        for (std::size_t i = 0; i < result.runs.size(); ++i) out << pad(LessonMetrics::format(m, result.runs[i]), widths[i]);
        out << "\n";
    }
    for (const LessonRunResult& r : result.runs) {
        if (!r.pytorchMessage.empty()) out << "\n" << r.label << ": PyTorch says: " << r.pytorchMessage << "\n";
        if (r.ran && r.metrics.oom()) out << "\n" << r.label << ": OOM at op " << r.metrics.ooms.front().opIndex << ": " << r.metrics.ooms.front().message << "\n";
    }
    out << "\nRule:     " << result.decidedBy << "\n";
    out << "Verdict:  " << verdictWord(result.outcome) << ". " << result.verdictText() << "\n";
    return out.str();
}

std::string LessonReport::json(const LessonResult& result) {
    const Lesson& lesson = result.lesson;
    const LessonProgram& p = lesson.program;
    std::ostringstream out;
    out << "{\"name\":" << q(lesson.name) << ",\"number\":" << lesson.number << ",\"title\":" << q(lesson.title)
        << ",\"question\":" << q(lesson.question) << ",\"claim\":" << q(lesson.claim) << ",\"program\":{\"kind\":"
        << q(p.kind == LessonProgram::Kind::Workload ? "workload" : p.kind == LessonProgram::Kind::Trace ? "trace" : "config_only");
    if (p.kind == LessonProgram::Kind::Workload) out << ",\"workload\":" << q(p.workload) << ",\"seed\":" << p.seed;
    if (p.kind == LessonProgram::Kind::Trace) out << ",\"trace\":" << q(p.trace);
    out << ",\"memory_fraction\":" << (p.memoryFraction ? number(*p.memoryFraction) : "null") << "}";
    out << ",\"runs\":[";
    std::vector<std::string> metrics = LessonMetrics::names();
    for (const std::string& m : shownMetrics(lesson)) {
        if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
    }
    for (std::size_t i = 0; i < result.runs.size(); ++i) {
        const LessonRunResult& r = result.runs[i];
        out << (i ? "," : "") << "{\"id\":" << q(r.id) << ",\"label\":" << q(r.label) << ",\"config\":" << q(r.config)
            << ",\"ran\":" << (r.ran ? "true" : "false") << ",\"gpu\":" << q(r.gpu)
            << ",\"memory_fraction\":" << (r.memoryFraction ? number(*r.memoryFraction) : "null") << ",\"metrics\":{";
        bool first = true;
        for (const std::string& m : metrics) {
            if (!r.ran && m.rfind("config", 0) != 0) continue;
            out << (first ? "" : ",") << q(m) << ":";
            try {
                const MetricValue v = LessonMetrics::value(m, r);
                out << (v.isText ? q(v.text) : number(v.number));
            } catch (const LessonError&) {
                out << "null";  // not measured for this run (e.g. no layout at a replay's peak)
            }
            first = false;
        }
        out << "},\"pytorch_message\":" << q(r.pytorchMessage);
        if (r.ran && r.metrics.oom()) out << ",\"first_oom_op\":" << r.metrics.ooms.front().opIndex;
        out << "}";
    }
    out << "],\"rules\":[";
    for (std::size_t i = 0; i < lesson.rules.size(); ++i) {
        out << (i ? "," : "") << "{\"when\":" << q(lesson.rules[i].when) << ",\"outcome\":" << q(outcomeName(lesson.rules[i].outcome)) << "}";
    }
    out << "],\"otherwise\":" << q(outcomeName(lesson.otherwise));
    if (result.cancelled) {
        out << ",\"verdict\":null,\"cancelled\":true}";
        return out.str();
    }
    out << ",\"decided_by\":" << q(result.decidedBy) << ",\"verdict\":" << q(outcomeName(result.outcome))
        << ",\"verdict_text\":" << q(result.verdictText()) << "}";
    return out.str();
}

std::string LessonReport::table(const std::vector<LessonResult>& results) {
    std::size_t width = 4;
    for (const LessonResult& r : results) width = std::max(width, r.lesson.name.size() + 2);
    std::ostringstream out;
    for (const LessonResult& r : results) {
        out << pad(r.lesson.name, width) << pad(r.cancelled ? "cancelled" : verdictWord(r.outcome), 12) << r.lesson.title << "\n";
    }
    return out.str();
}

}  // namespace allocscope::app
