// The verdict rule language: what it accepts, what each operator means, and the errors (with the
// column) for rules it refuses.
#include <QtTest>
#include <map>

#include "app/lessons/LessonError.h"
#include "app/lessons/VerdictRule.h"

using namespace allocscope::app;

class TestVerdictRule : public QObject {
    Q_OBJECT

    static VerdictRule::Names names() {
        VerdictRule::Names n;
        n.metricKind = [](const std::string& m) -> char {
            if (m == "peakReserved" || m == "oom" || m == "retries" || m == "stat.num_ooms") return 'n';
            if (m == "configVerdict") return 't';
            return 0;
        };
        n.runs = {"A", "B"};
        return n;
    }

    static bool eval(const std::string& rule, std::map<std::string, double> numbers, std::string verdictText = "accepted") {
        const VerdictRule r = VerdictRule::parse(rule, names(), "test");
        return r.holds([&](const std::string& metric, const std::string& run) {
            MetricValue v;
            if (metric == "configVerdict") {
                v.isText = true;
                v.text = verdictText;
                return v;
            }
            v.number = numbers.at(metric + "[" + run + "]");
            return v;
        });
    }

    static std::string error(const std::string& rule) {
        try {
            VerdictRule::parse(rule, names(), "x.json: verdict.rules[0].when");
        } catch (const LessonError& e) {
            return e.problem() + " | " + e.location();
        }
        return "";
    }

private slots:
    void marginBelow() {
        // B is 10% below A: holds at >= 10%, not at >= 11%.
        const std::map<std::string, double> m = {{"peakReserved[A]", 1000}, {"peakReserved[B]", 900}};
        QVERIFY(eval("peakReserved[B] < peakReserved[A] by >= 10%", m));
        QVERIFY(!eval("peakReserved[B] < peakReserved[A] by >= 11%", m));
        QVERIFY(!eval("peakReserved[A] < peakReserved[B]", m));
        QVERIFY(eval("peakReserved[A] > peakReserved[B] by >= 100 B", m));
        QVERIFY(!eval("peakReserved[A] > peakReserved[B] by >= 1 KiB", m));
    }
    void logicAndArithmetic() {
        const std::map<std::string, double> m = {{"oom[A]", 1}, {"oom[B]", 0}, {"retries[A]", 5}, {"retries[B]", 0}};
        QVERIFY(eval("oom[A] and not oom[B]", m));
        QVERIFY(!eval("oom[B] or retries[B] > 0", m));
        QVERIFY(eval("not (oom[B] or retries[B] > 0)", m));
        QVERIFY(eval("retries[A] - retries[B] * 2 == 5", m));
        QVERIFY(eval("retries[A] / 2 == 2.5", m));
        // x / 0 is no number: neither a comparison nor its negation holds by accident.
        QVERIFY(!eval("retries[A] / retries[B] > 1", m));
        QVERIFY(!eval("retries[A] / retries[B] <= 1", m));
    }
    void withinTolerance() {
        const std::map<std::string, double> m = {{"peakReserved[A]", 100.0 * 1048576}, {"peakReserved[B]", 101.0 * 1048576}};
        QVERIFY(eval("peakReserved[A] == peakReserved[B] within 1 MiB", m));
        QVERIFY(!eval("peakReserved[A] == peakReserved[B] within 0.5%", m));
        QVERIFY(eval("peakReserved[A] != peakReserved[B]", m));
        QVERIFY(eval("peakReserved[B] > 100 MiB", m));
    }
    void texts() {
        QVERIFY(eval("configVerdict[A] == 'abort-at-import'", {}, "abort-at-import"));
        QVERIFY(!eval("configVerdict[A] == 'accepted'", {}, "abort-at-import"));
    }
    void referencesAreListedOnce() {
        const VerdictRule r = VerdictRule::parse("retries[A] > retries[B] and retries[A] > 0", names(), "t");
        QCOMPARE(r.references().size(), std::size_t{2});
    }
    void errorsSayWhatAndWhere() {
        QCOMPARE(error("peakReserved[C] > 0"), std::string("verdict rule: no run 'C' in this lesson | x.json: verdict.rules[0].when, column 14"));
        QVERIFY(error("peakReservd[A] > 0").find("unknown metric 'peakReservd'") != std::string::npos);
        QVERIFY(error("peakReserved > 0").find("needs a run") != std::string::npos);
        QVERIFY(error("peakReserved[A] = 0").find("'=' is not an operator (write '==')") != std::string::npos);
        QVERIFY(error("peakReserved[A] > ").find("the rule ends where a value is expected") != std::string::npos);
        QVERIFY(error("oom[A] and").find("column 11") != std::string::npos);
        QVERIFY(error("configVerdict[A] < 'x'").find("texts can only be compared with == or !=") != std::string::npos);
        QVERIFY(error("configVerdict[A] == 3").find("compares a text with a number") != std::string::npos);
        QVERIFY(error("peakReserved[A] == peakReserved[B] by >= 3%").find("'by' needs") != std::string::npos);
        QVERIFY(error("(oom[A]").find("expected ')'") != std::string::npos);
        QVERIFY(error("oom[A] oom[B]").find("unexpected 'oom'") != std::string::npos);
        QVERIFY(error("'abc").find("never ends") != std::string::npos);
        QVERIFY(error("configVerdict[A]").find("must be a condition") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestVerdictRule)
#include "TestVerdictRule.moc"
