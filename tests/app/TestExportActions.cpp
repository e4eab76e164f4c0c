// File ▸ Export's work without a window or dialogs: what each export writes, and what the user is
// told when it cannot (the window passes its error reporter and status line in).
#include <QFile>
#include <QImage>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "app/gui/BackgroundJob.h"
#include "app/gui/ExportActions.h"
#include "views/data/TimelineCsv.h"

using allocscope::app::BackgroundJob;
using allocscope::app::ExportActions;
namespace views = allocscope::views;

class TestExportActions : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QWidget window_;
    QTabWidget* tabs_ = nullptr;
    views::TimelineData timeline_;
    QString session_;
    int run_ = 0;
    QStringList errors_;    // "title: message"
    QStringList statuses_;
    int jobsStarted_ = 0;

    ExportActions make() {
        ExportActions::Window w;
        w.widget = &window_;
        w.tabs = tabs_;
        w.compare = nullptr;
        w.sessionPath = [this] { return session_; };
        w.timeline = [this]() -> const views::TimelineData& { return timeline_; };
        w.runTableCsv = [] { return QStringLiteral("run,name\n1,demo\n"); };
        w.selectedRun = [this] { return run_; };
        w.eventCount = [] { return qint64{100}; };
        w.error = [this](const QString& title, const QString& message) { errors_ << title + QStringLiteral(": ") + message; };
        w.status = [this](const QString& message) { statuses_ << message; };
        w.startJob = [this](BackgroundJob* job, const QString&) {
            ++jobsStarted_;
            delete job;
        };
        return ExportActions(std::move(w));
    }
    static QByteArray contents(const QString& path) {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

private slots:
    void initTestCase() {
        tabs_ = new QTabWidget(&window_);
        auto* view = new QWidget;
        view->setMinimumSize(320, 200);
        tabs_->addTab(view, QStringLiteral("&Segments"));
        window_.resize(400, 300);
        tabs_->resize(400, 300);
        views::TimelineBucket b;
        b.lastEvent = 99;
        b.bytes[0] = {1024, 2048};
        timeline_.buckets = {b};
        session_ = dir_.filePath(QStringLiteral("s.allocscope"));
    }
    void init() {
        errors_.clear();
        statuses_.clear();
        jobsStarted_ = 0;
        run_ = 0;
    }

    void timelineCsvIsWhatTheChartShows() {
        ExportActions exports = make();
        const QString path = dir_.filePath(QStringLiteral("t.csv"));
        QVERIFY(exports.exportTimelineCsv(path));
        QCOMPARE(QString::fromUtf8(contents(path)), views::timelineCsv(timeline_));
        QCOMPARE(statuses_, QStringList({QStringLiteral("Exported ") + path}));
        QVERIFY(errors_.isEmpty());
    }

    void runTableCsvIsTheRunList() {
        ExportActions exports = make();
        const QString path = dir_.filePath(QStringLiteral("runs.csv"));
        QVERIFY(exports.exportRunTableCsv(path));
        QCOMPARE(contents(path), QByteArray("run,name\n1,demo\n"));
    }

    void unwritablePathSaysWhichFile() {
        ExportActions exports = make();
        const QString path = dir_.filePath(QStringLiteral("missing/dir/runs.csv"));
        QVERIFY(!exports.exportRunTableCsv(path));
        QCOMPARE(errors_.size(), 1);
        QVERIFY2(errors_[0].startsWith(QStringLiteral("Export failed: cannot write ")) && errors_[0].contains(path), qPrintable(errors_[0]));
        QVERIFY(statuses_.isEmpty());
    }

    void currentViewAsPng() {
        ExportActions exports = make();
        const QString path = dir_.filePath(QStringLiteral("view.png"));
        QVERIFY2(exports.exportCurrentView(path), qPrintable(errors_.join('\n')));
        QCOMPARE(QImage(path).size(), tabs_->currentWidget()->size());
    }

    void pickleNeedsARun() {
        ExportActions exports = make();
        exports.exportSnapshotPickle(dir_.filePath(QStringLiteral("r.pickle")));
        QCOMPARE(errors_, QStringList({QStringLiteral("Export failed: Select a run to export first.")}));
        QCOMPARE(jobsStarted_, 0);
    }

    void pickleNeverOverwritesTheSession() {
        ExportActions exports = make();
        run_ = 1;
        QFile f(session_);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("session");
        f.close();
        exports.exportSnapshotPickle(session_);
        QCOMPARE(errors_, QStringList({QStringLiteral("Export failed: The export would overwrite the session file %1.").arg(session_)}));
        QCOMPARE(jobsStarted_, 0);
        QCOMPARE(contents(session_), QByteArray("session"));
    }

    void pickleOfARunIsABackgroundJob() {
        ExportActions exports = make();
        run_ = 1;
        exports.exportSnapshotPickle(dir_.filePath(QStringLiteral("r.pickle")));
        QVERIFY(errors_.isEmpty());
        QCOMPARE(jobsStarted_, 1);
    }
};

QTEST_MAIN(TestExportActions)
#include "TestExportActions.moc"
