// Lesson files that are wrong get one clear error: what is wrong and where (file, key path, line
// and column). A good minimal lesson loads.
#include <QtTest>

#include "LessonTestSupport.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/LessonLibrary.h"
#include "app/lessons/LessonLoader.h"

using namespace allocscope::app;

namespace {

const char* kGood = R"({
  "name": "tiny",
  "number": 1,
  "title": "t",
  "question": "q",
  "claim": "c",
  "program": {"workload": "fragmentation-101"},
  "runs": [{"id": "A", "config": ""}, {"id": "B", "config": "expandable_segments:True"}],
  "verdict": {"rules": [{"when": "peakReserved[B] < peakReserved[A]", "outcome": "true"}],
              "otherwise": "false", "texts": {"true": "yes", "false": "no"}},
  "steps": [{"text": "look", "run": "B", "at": "peak", "view": "segments"}]
})";

// kGood with `from` replaced by `to`; returns "what | where" of the error, or "" when it loads.
std::string loadError(const std::string& from, const std::string& to) {
    std::string text = kGood;
    const std::size_t at = text.find(from);
    if (at == std::string::npos) qFatal("'%s' not in the template", from.c_str());
    text.replace(at, from.size(), to);
    try {
        LessonLoader::parse(text, "/somewhere/tiny.json");
    } catch (const LessonError& e) {
        return e.problem() + " | " + e.location();
    }
    return "";
}

}  // namespace

class TestLessonFiles : public QObject {
    Q_OBJECT
private slots:
    void goodLessonLoads() {
        const Lesson l = LessonLoader::parse(kGood, "/somewhere/tiny.json");
        QCOMPARE(l.name, std::string("tiny"));
        QCOMPARE(l.runs.size(), std::size_t{2});
        QCOMPARE(l.runs[0].label, std::string("default"));
        QCOMPARE(l.runs[1].label, std::string("expandable_segments:True"));
        QCOMPARE(l.steps.front().at, std::string("peak"));
    }
    void invalidJsonSaysLineAndColumn() {
        const std::string e = loadError("\"title\": \"t\",", "\"title\": \"t\",,");
        QVERIFY2(e.find("not valid JSON") != std::string::npos, e.c_str());
        QVERIFY2(e.find("/somewhere/tiny.json: line 4") != std::string::npos, e.c_str());
    }
    void missingKey() {
        const std::string e = loadError("\"claim\": \"c\",", "");
        QVERIFY2(e.find("missing key 'claim'") != std::string::npos, e.c_str());
        QVERIFY2(e.find("tiny.json") != std::string::npos, e.c_str());
    }
    void wrongType() {
        const std::string e = loadError("\"number\": 1", "\"number\": \"one\"");
        QCOMPARE(e, std::string("expected an integer, found a str | tiny.json: number (line 3, column 13)"));
    }
    void misspeltKey() {
        const std::string e = loadError("\"config\": \"\"}", "\"confg\": \"\"}");
        QVERIFY2(e.find("unknown key 'confg'") != std::string::npos, e.c_str());
        QVERIFY2(e.find("runs[0].confg") != std::string::npos, e.c_str());
    }
    void unknownWorkloadAndParameter() {
        QVERIFY(loadError("fragmentation-101", "fragmentaton-101").find("unknown workload 'fragmentaton-101'") != std::string::npos);
        const std::string e = loadError("{\"workload\": \"fragmentation-101\"}", "{\"workload\": \"fragmentation-101\", \"params\": {\"tensors\": -4}}");
        QVERIFY2(e.find("runs[0].params") != std::string::npos, e.c_str());
        QVERIFY2(e.find("tensors") != std::string::npos, e.c_str());
    }
    void missingTrace() {
        const std::string e = loadError("{\"workload\": \"fragmentation-101\"}", "{\"trace\": \"traces/nope.pickle\"}");
        QVERIFY2(e.find("no trace file at /somewhere/traces/nope.pickle") != std::string::npos, e.c_str());
        QVERIFY2(e.find("program.trace") != std::string::npos, e.c_str());
    }
    void badRule() {
        const std::string e = loadError("peakReserved[B] < peakReserved[A]", "peakReserved[B] < peakReserved[X]");
        QCOMPARE(e, std::string("verdict rule: no run 'X' in this lesson | tiny.json: verdict.rules[0].when, column 32"));
    }
    void badOutcomeAndMissingText() {
        QVERIFY(loadError("\"outcome\": \"true\"", "\"outcome\": \"yes\"").find("an outcome is \"true\", \"false\" or \"depends\"") != std::string::npos);
        QVERIFY(loadError("\"otherwise\": \"false\"", "\"otherwise\": \"depends\"").find("missing key 'depends'") != std::string::npos);
    }
    void duplicateRunAndBadStep() {
        QVERIFY(loadError("{\"id\": \"B\"", "{\"id\": \"A\"").find("two runs are called 'A'") != std::string::npos);
        QVERIFY(loadError("\"at\": \"peak\"", "\"at\": \"middle\"").find("'at' is start, peak, oom, end") != std::string::npos);
        QVERIFY(loadError("\"view\": \"segments\"", "\"view\": \"pie\"").find("unknown view 'pie'") != std::string::npos);
        QVERIFY(loadError("\"run\": \"B\"", "\"run\": \"Z\"").find("steps[0].run") != std::string::npos);
    }
    void badFractionAndGpu() {
        QVERIFY(loadError("{\"workload\": \"fragmentation-101\"}", "{\"workload\": \"fragmentation-101\", \"memory_fraction\": 1.5}")
                    .find("a memory fraction must be in (0, 1]") != std::string::npos);
        QVERIFY(loadError("{\"workload\": \"fragmentation-101\"}", "{\"workload\": \"fragmentation-101\", \"gpu\": \"h900\"}")
                    .find("unknown GPU preset 'h900'") != std::string::npos);
    }
    void libraryFindsByNameOrNumberAndSuggests() {
        const std::vector<Lesson> lessons = LessonLibrary::load(lessontest::lessonsDir());
        QCOMPARE(LessonLibrary::find(lessons, "empty-cache", "d").number, 5);
        QCOMPARE(LessonLibrary::find(lessons, "5", "d").name, std::string("empty-cache"));
        try {
            LessonLibrary::find(lessons, "empty-cach", "d");
            QFAIL("expected an error");
        } catch (const LessonError& e) {
            QVERIFY2(std::string(e.what()).find("did you mean 'empty-cache'") != std::string::npos, e.what());
        }
    }
    void shippedLessonFilesAreNeverWritten() {
        // Loading and running reads only: the file's bytes are unchanged afterwards.
        const std::string path = lessontest::lessonsDir() + "/07-malformed-config.json";
        const std::string before = lessontest::readFile(path);
        LessonLoader::loadFile(path);
        QCOMPARE(lessontest::readFile(path), before);
    }
};

QTEST_GUILESS_MAIN(TestLessonFiles)
#include "TestLessonFiles.moc"
