// `allocscope-cli lessons` and `allocscope-cli lesson`: output format, JSON verdict, errors.
#include <QtTest>
#include <sstream>

#include "LessonTestSupport.h"
#include "app/cli/VerbRegistry.h"
#include "tests/cli/InProcessCli.h"
#include "storage/formats/JsonReader.h"

using allocscope::cli::runCli;

class TestLessonCli : public QObject {
    Q_OBJECT

    static int cli(std::vector<std::string> args, std::string& out, std::string& err) {
        clitest::CliResult r = clitest::runInProcess(std::move(args));
        out = std::move(r.out);
        err = std::move(r.err);
        return r.code;
    }

private slots:
    void initTestCase() { qputenv("ALLOCSCOPE_LESSONS_DIR", QByteArray::fromStdString(lessontest::lessonsDir())); }

    void lessonsListsThirteenNameFirst() {
        std::string out, err;
        QCOMPARE(cli({"lessons"}, out, err), 0);
        std::istringstream lines(out);
        std::string line;
        int n = 0;
        while (std::getline(lines, line)) {
            ++n;
            QVERIFY2(line.find('\t') != std::string::npos, line.c_str());
            QCOMPARE(line.substr(line.find('\t') + 1, std::to_string(n).size() + 1), std::to_string(n) + "\t");
        }
        QCOMPARE(n, 13);
        QVERIFY(out.rfind("fragmentation-oom\t1\tWhy did a 256 MiB request fail", 0) == 0);
    }

    void lessonPrintsClaimNumbersVerdict() {
        std::string out, err;
        QCOMPARE(cli({"lesson", "expandable-segments"}, out, err), 0);
        QVERIFY(out.rfind("2. expandable-segments: ", 0) == 0);
        QVERIFY(out.find("\nClaim:    Setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True") != std::string::npos);
        QVERIFY2(out.find("peak reserved     4052.0 MiB  2540.0 MiB") != std::string::npos, out.c_str());
        QVERIFY(out.find("\nVerdict:  TRUE. ") != std::string::npos);
    }

    void lessonJsonHasVerdict() {
        std::string out, err;
        QCOMPARE(cli({"lesson", "max-split-size", "--json"}, out, err), 0);
        const allocscope::formats::PyTree tree = allocscope::formats::JsonReader::read(out);
        allocscope::formats::PyRef verdict = 0;
        QVERIFY(tree.find(tree.root, "verdict", verdict));
        QCOMPARE(tree.text(verdict), std::string("false"));
        QVERIFY(out.find("\"peakReserved\":5156896768") != std::string::npos);  // 4918 MiB, PyTorch's number
    }

    void allLessonsJsonIsAnArrayOfThirteen() {
        std::string out, err;
        QCOMPARE(cli({"lesson", "--json"}, out, err), 0);
        const allocscope::formats::PyTree tree = allocscope::formats::JsonReader::read(out);
        QCOMPARE(tree.items(tree.root).size(), std::size_t{13});
    }

    void allLessonsEndWithOneLineEach() {
        std::string out, err;
        QCOMPARE(cli({"lesson"}, out, err), 0);
        QVERIFY(out.find("\nfragmentation-oom    FALSE       Why did") != std::string::npos);
        QVERIFY(out.find("\nstreams              FALSE       Two streams") != std::string::npos);
        QVERIFY(out.find("\ncuda-graphs          FALSE       CUDA graphs") != std::string::npos);
    }

    void errors() {
        std::string out, err;
        QCOMPARE(cli({"lesson", "no-such-lesson"}, out, err), 1);
        QVERIFY(err.rfind("allocscope-cli: no lesson 'no-such-lesson'", 0) == 0);
        QCOMPARE(cli({"lesson", "--frob"}, out, err), 2);
        QCOMPARE(cli({"lessons", "--dir", "/nonexistent/lessons"}, out, err), 1);
        QCOMPARE(err, std::string("allocscope-cli: no lesson folder there (/nonexistent/lessons)\n"));
    }
};

QTEST_GUILESS_MAIN(TestLessonCli)
#include "TestLessonCli.moc"
