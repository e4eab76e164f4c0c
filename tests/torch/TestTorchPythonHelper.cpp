// The Python helper app/torch/python/allocscope_torch against the real liballocscope_torch.so on
// the simulated device (ALLOCSCOPE_DEVICE=simulated:BYTES). CI has neither torch nor a GPU, so
// python3 runs with a stub `torch` (tests/torch/stub_torch.py, copied into a temporary folder)
// that records what enable() asks of PyTorch and raises where c10's own allocator calls would be
// reached. Each case is a small Python program whose last stdout line is a JSON object.
#include <QtTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

namespace {

struct PythonRun {
    int exitCode = -1;
    QString out;
    QString err;
    QJsonObject json;  // the last line of stdout
};

// Every case starts with these lines: the helper, the stub, and the library's path.
const char* const kPrologue = R"(import ctypes, json, os, sys
import torch, allocscope_torch
from allocscope_torch import _library
LIB = os.environ["TEST_LIBRARY"]
MB = 1 << 20
def stat(key):
    return allocscope_torch.memory_stats()[key]
)";

}  // namespace

class TestTorchPythonHelper : public QObject {
    Q_OBJECT

private:
    QString python_;
    QTemporaryDir dir_;

    QString library() const { return QFileInfo(QStringLiteral(ALLOCSCOPE_TORCH_LIBRARY_FILE)).canonicalFilePath(); }

    PythonRun runPython(const QString& body, const QString& packageDir = QStringLiteral(ALLOCSCOPE_SOURCE_DIR "/app/torch/python"),
                        const QMap<QString, QString>& extra = {}) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"ALLOCSCOPE_SESSION", "ALLOCSCOPE_CUDA_ALLOC_CONF", "ALLOCSCOPE_TORCH_LIBRARY",
                                 "ALLOCSCOPE_PYTHON_FRAMES", "PYTORCH_CUDA_ALLOC_CONF"}) {
            env.remove(QString::fromLatin1(name));
        }
        env.insert(QStringLiteral("PYTHONPATH"), dir_.filePath(QStringLiteral("stub")) + QLatin1Char(':') + packageDir);
        env.insert(QStringLiteral("PYTHONDONTWRITEBYTECODE"), QStringLiteral("1"));  // nothing written into the tree
        env.insert(QStringLiteral("ALLOCSCOPE_DEVICE"), QStringLiteral("simulated:85899345920"));
        env.insert(QStringLiteral("TEST_LIBRARY"), library());
#ifdef ALLOCSCOPE_TEST_ASAN_RUNTIME
        // The sanitized library needs the ASan runtime (and libstdc++) first in the process; python3 has none.
        env.insert(QStringLiteral("LD_PRELOAD"), QStringLiteral(ALLOCSCOPE_TEST_ASAN_RUNTIME));
        env.insert(QStringLiteral("ASAN_OPTIONS"), QStringLiteral("detect_leaks=0"));
#endif
        for (auto it = extra.begin(); it != extra.end(); ++it) env.insert(it.key(), it.value());
        QProcess process;
        process.setProcessEnvironment(env);
        process.setWorkingDirectory(dir_.path());
        process.start(python_, {QStringLiteral("-c"), QString::fromLatin1(kPrologue) + body});
        process.waitForFinished(-1);
        PythonRun run;
        run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
        run.out = QString::fromUtf8(process.readAllStandardOutput());
        run.err = QString::fromUtf8(process.readAllStandardError());
        const QStringList lines = run.out.trimmed().split(QLatin1Char('\n'));
        run.json = QJsonDocument::fromJson(lines.last().toUtf8()).object();
        return run;
    }

    static QString why(const PythonRun& run) { return QStringLiteral("stdout:\n%1\nstderr:\n%2").arg(run.out, run.err); }

private slots:
    void initTestCase() {
        python_ = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python_.isEmpty()) QSKIP("python3 is not installed");
        QVERIFY(dir_.isValid());
        QVERIFY(QDir().mkpath(dir_.filePath(QStringLiteral("stub/torch"))));
        QVERIFY(QFile::copy(QStringLiteral(ALLOCSCOPE_TORCH_STUB), dir_.filePath(QStringLiteral("stub/torch/__init__.py"))));
        QVERIFY2(!library().isEmpty(), ALLOCSCOPE_TORCH_LIBRARY_FILE);
    }

    void enableInstallsTheLibraryAndNamesTheSession() {
        const QString session = dir_.filePath(QStringLiteral("run one.allocscope"));
        const PythonRun run = runPython(QStringLiteral(R"(
path = allocscope_torch.enable(session="run one.allocscope", config="expandable_segments:True", library=LIB)
lib = _library.load(path)
p = lib.allocscope_malloc(5 * MB, 0, None)
lib.allocscope_free(p, 5 * MB, 0, None)
print(json.dumps({"calls": torch.calls, "path": path, "finished": allocscope_torch.finish()}))
)"));
        QVERIFY2(run.exitCode == 0, qPrintable(why(run)));
        const QJsonArray calls = run.json.value(QStringLiteral("calls")).toArray();
        QCOMPARE(calls.size(), 2);
        QCOMPARE(calls.at(0).toArray(), (QJsonArray{QStringLiteral("CUDAPluggableAllocator"), library(),
                                                     QStringLiteral("allocscope_malloc"), QStringLiteral("allocscope_free")}));
        QCOMPARE(calls.at(1).toArray().at(0).toString(), QStringLiteral("change_current_allocator"));
        QCOMPARE(run.json.value(QStringLiteral("finished")).toString(), session);
        // The one line, naming the config, the session and the command that opens it (quoted).
        const QString line = QStringLiteral("AllocScope allocator on (config \"expandable_segments:True\"); recording into %1"
                                            " — watch it live: allocscope '%1'").arg(session);
        QVERIFY2(run.err.contains(line), qPrintable(why(run)));

        // The session holds the run, recorded by the library the helper loaded.
        QProcess cli;
        cli.start(qEnvironmentVariable("ALLOCSCOPE_CLI"), {QStringLiteral("info"), session, QStringLiteral("--json")});
        cli.waitForFinished(-1);
        const QByteArray info = cli.readAllStandardOutput();
        QCOMPARE(cli.exitCode(), 0);
        const QJsonArray runs = QJsonDocument::fromJson(info).object().value(QStringLiteral("runs")).toArray();
        QCOMPARE(runs.size(), 1);
        QCOMPARE(runs.at(0).toObject().value(QStringLiteral("config")).toString(), QStringLiteral("expandable_segments:True"));
        QVERIFY2(runs.at(0).toObject().value(QStringLiteral("events")).toInt() >= 3, info.constData());
    }

    void recordStreamReachesTheLibraryWithTheStorageBase() {
        const PythonRun run = runPython(QStringLiteral(R"(
allocscope_torch.enable(library=LIB)
lib = _library.load(allocscope_torch.library_path())
p = lib.allocscope_malloc(MB, 0, None)
torch.Tensor(p, offset=4096).record_stream(torch.cuda.Stream(0x7000))  # a view inside the block
lib.allocscope_free(p, MB, 0, None)
pending = stat("active_bytes.all.current")
lib.allocscope_synchronize()
completed = stat("active_bytes.all.current")
q = lib.allocscope_malloc(MB, 0, None)
lib.allocscope_free(q, MB, 0, None)
unrecorded = stat("active_bytes.all.current")
error = ""
try:
    torch.Tensor(q + 77 * MB).record_stream(torch.cuda.Stream(0x7000))
except RuntimeError as e:
    error = str(e)
print(json.dumps({"calls": torch.calls, "p": p, "pending": pending, "completed": completed,
                  "unrecorded": unrecorded, "error": error}))
)"));
        QVERIFY2(run.exitCode == 0, qPrintable(why(run)));
        const QJsonObject& j = run.json;
        const double p = j.value(QStringLiteral("p")).toDouble();
        // torch's own record_stream ran too (on the view), then the library got the block.
        const QJsonArray call = j.value(QStringLiteral("calls")).toArray().at(2).toArray();
        QCOMPARE(call.at(0).toString(), QStringLiteral("Tensor.record_stream"));
        QCOMPARE(call.at(1).toDouble(), p + 4096);
        QCOMPARE(call.at(2).toInt(), 0x7000);
        QCOMPARE(j.value(QStringLiteral("pending")).toInt(), 1 << 20);  // in use on stream 0x7000
        QCOMPARE(j.value(QStringLiteral("completed")).toInt(), 0);
        QCOMPARE(j.value(QStringLiteral("unrecorded")).toInt(), 0);
        const QString error = j.value(QStringLiteral("error")).toString();
        QVERIFY2(error.contains(QStringLiteral("record_stream failed")) && error.contains(QStringLiteral("no allocated block")),
                 qPrintable(error));
    }

    void memoryStatsAndTheRoutedCallsAreTheLibrarys() {
        const PythonRun run = runPython(QStringLiteral(R"(
allocscope_torch.enable(library=LIB)
lib = _library.load(allocscope_torch.library_path())
p = lib.allocscope_malloc(3 * MB, 0, None)
stats = allocscope_torch.memory_stats()
raw = json.loads(_library.read_text(lib.allocscope_stats_json, 0))
out = {"same": stats == raw, "keys": len(stats), "sorted": list(stats) == sorted(raw),
       "routed": dict(torch.cuda.memory_stats()) == dict(stats), "allocated": torch.cuda.memory.memory_allocated()}
torch.cuda.set_per_process_memory_fraction(0.5)
out["raised_by_enable"] = lib.allocscope_set_oom_raises(0)  # a ctypes caller wants the NULL back
out["over_half"] = lib.allocscope_malloc(45 << 30, 0, None)
out["ooms"] = stat("num_ooms")
try:
    torch.cuda.set_per_process_memory_fraction(1.5)
except ValueError as e:
    out["bad_fraction"] = str(e)
lib.allocscope_free(p, 3 * MB, 0, None)
out["reserved_cached"] = stat("reserved_bytes.all.current")
torch.cuda.empty_cache()
out["reserved_emptied"] = stat("reserved_bytes.all.current")
torch.cuda.reset_peak_memory_stats()
out["peak"] = stat("allocated_bytes.all.peak")
torch.cuda.memory.reset_accumulated_memory_stats(0)
out["allocations"] = stat("allocation.all.allocated")
out["summary"] = torch.cuda.memory_summary()
print(json.dumps(out))
)"));
        QVERIFY2(run.exitCode == 0, qPrintable(why(run)));
        const QJsonObject& j = run.json;
        QVERIFY(j.value(QStringLiteral("same")).toBool());
        QCOMPARE(j.value(QStringLiteral("keys")).toInt(), 122);
        QVERIFY(j.value(QStringLiteral("sorted")).toBool());
        QVERIFY(j.value(QStringLiteral("routed")).toBool());
        QCOMPARE(j.value(QStringLiteral("allocated")).toInt(), 3 << 20);
        QCOMPARE(j.value(QStringLiteral("raised_by_enable")).toInt(), 1);  // PyTorch gets an exception, not NULL
        QVERIFY(j.value(QStringLiteral("over_half")).isNull());  // 45 GiB > half of 80 GiB: refused
        QCOMPARE(j.value(QStringLiteral("ooms")).toInt(), 1);
        QVERIFY(j.value(QStringLiteral("bad_fraction")).toString().contains(QStringLiteral("Allowed range: 0~1")));
        QVERIFY(j.value(QStringLiteral("reserved_cached")).toInt() > 0);
        QCOMPARE(j.value(QStringLiteral("reserved_emptied")).toInt(), 0);
        QCOMPARE(j.value(QStringLiteral("peak")).toInt(), 0);
        QCOMPARE(j.value(QStringLiteral("allocations")).toInt(), 0);
        QVERIFY(j.value(QStringLiteral("summary")).toString().contains(QStringLiteral("PyTorch CUDA memory summary")));
    }

    void aMissingLibrarySaysWhereItLooked() {
        // The package's folder (below the multiarch triplet), then that of an install without one.
        const QString packaged = QStringLiteral(ALLOCSCOPE_TORCH_PACKAGED_FILE);
        const QString plain = QStringLiteral("/usr/lib/allocscope/liballocscope_torch.so");
        if (QFile::exists(packaged) || QFile::exists(plain)) QSKIP("an installed liballocscope_torch.so would be found");
        // The package alone, away from any build tree.
        const QString package = dir_.filePath(QStringLiteral("alone/allocscope_torch"));
        QVERIFY(QDir().mkpath(package));
        for (const char* file : {"__init__.py", "_library.py"}) {
            QVERIFY(QFile::copy(QStringLiteral(ALLOCSCOPE_SOURCE_DIR "/app/torch/python/allocscope_torch/") + QLatin1String(file),
                                package + QLatin1Char('/') + QLatin1String(file)));
        }
        const QString body = QStringLiteral(R"(
out = {}
for name, kwargs in (("searched", {}), ("named", {"library": "/nonexistent/liballocscope_torch.so"})):
    try:
        allocscope_torch.enable(**kwargs)
    except FileNotFoundError as e:
        out[name] = str(e)
out["calls"] = torch.calls
print(json.dumps(out))
)");
        PythonRun run = runPython(body, dir_.filePath(QStringLiteral("alone")));
        QVERIFY2(run.exitCode == 0, qPrintable(why(run)));
        const QString searched = run.json.value(QStringLiteral("searched")).toString();
        for (const QString& place : {QStringLiteral("looked in: ") + package + QStringLiteral("/liballocscope_torch.so"), packaged,
                                     plain, QStringLiteral("ALLOCSCOPE_TORCH_LIBRARY")}) {
            QVERIFY2(searched.contains(place), qPrintable(searched));
        }
        if (packaged != plain) QVERIFY2(searched.indexOf(packaged) < searched.indexOf(plain), qPrintable(searched));
        QVERIFY2(!searched.contains(QStringLiteral("/build/")), qPrintable(searched));  // no source checkout around it
        QVERIFY(run.json.value(QStringLiteral("named")).toString().contains(
            QStringLiteral("library='/nonexistent/liballocscope_torch.so' does not exist")));
        QVERIFY(run.json.value(QStringLiteral("calls")).toArray().isEmpty());  // nothing installed

        run = runPython(body, dir_.filePath(QStringLiteral("alone")), {{QStringLiteral("ALLOCSCOPE_TORCH_LIBRARY"), QStringLiteral("/no/such.so")}});
        QVERIFY(run.json.value(QStringLiteral("searched")).toString().contains(QStringLiteral("ALLOCSCOPE_TORCH_LIBRARY='/no/such.so' does not exist")));
    }

    void theBuildTreesLibraryIsFoundWithoutBeingNamed() {
        const QString buildRoot = QFileInfo(QStringLiteral(ALLOCSCOPE_SOURCE_DIR "/build")).canonicalFilePath();
        if (buildRoot.isEmpty() || !library().startsWith(buildRoot + QLatin1Char('/'))) {
            QSKIP("this build tree is not under the checkout's build/, where the helper looks");
        }
        const PythonRun run = runPython(QStringLiteral(R"(
path = allocscope_torch.enable()
print(json.dumps({"path": os.path.realpath(path), "installed": torch.calls[0][1] == path}))
)"));
        QVERIFY2(run.exitCode == 0, qPrintable(why(run)));
        // The newest build/*/app/torch/liballocscope_torch.so (this one, or another tree's).
        const QString path = run.json.value(QStringLiteral("path")).toString();
        QVERIFY2(path.startsWith(buildRoot + QLatin1Char('/')) && path.endsWith(QStringLiteral("/app/torch/liballocscope_torch.so")),
                 qPrintable(path));
        QVERIFY(run.json.value(QStringLiteral("installed")).toBool());
    }

    void enablingAfterCudaStartedIsARuntimeError() {
        const QString body = QStringLiteral(R"(
out = {}
try:
    allocscope_torch.enable(library=LIB)
except RuntimeError as e:
    out["error"] = str(e)
out["enabled"] = allocscope_torch.enabled()
out["routed"] = torch.cuda.memory_stats.__module__ == "allocscope_torch"
print(json.dumps(out))
)");
        for (const char* variable : {"STUB_TORCH_CUDA_INITIALIZED", "STUB_TORCH_REFUSE_SWAP"}) {
            const PythonRun run = runPython(body, QStringLiteral(ALLOCSCOPE_SOURCE_DIR "/app/torch/python"),
                                            {{QString::fromLatin1(variable), QStringLiteral("1")}});
            QVERIFY2(run.exitCode == 0, qPrintable(why(run)));
            const QString error = run.json.value(QStringLiteral("error")).toString();
            QVERIFY2(error.contains(QStringLiteral("enable() came too late")) &&
                         error.contains(QStringLiteral("call enable() right after `import torch`")),
                     qPrintable(error));
            QVERIFY(!run.json.value(QStringLiteral("enabled")).toBool());
            QVERIFY(!run.json.value(QStringLiteral("routed")).toBool());
        }
    }
};

QTEST_GUILESS_MAIN(TestTorchPythonHelper)
#include "TestTorchPythonHelper.moc"
