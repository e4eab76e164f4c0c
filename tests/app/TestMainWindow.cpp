// The real main window, offscreen at 1280x720, driven like a user: open a session, select a run,
// step the scrubber, select a block, run a workload, import a snapshot, save, export, switch
// theme; models and sampled pixels are checked against the state the storage layer rebuilds.
#include <QtTest>
#include <QTabBar>
#include <QTabWidget>
#include <QCryptographicHash>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSlider>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QComboBox>
#include <QSpinBox>
#include <QPlainTextEdit>

#include "tests/FileBytes.h"
#include "MessageBoxCatcher.h"
#include "app/gui/ComparePage.h"
#include "app/gui/ExperimentPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/ViewDataAdapters.h"
#include "SessionFixture.h"
#include "allocator/core/MemorySummary.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StateCursor.h"
#include "views/theme/ThemePalette.h"
#include "views/widgets/BlockInspectorWidget.h"
#include "views/charts/TimelineChartView.h"
#include "views/widgets/ConfigEditorWidget.h"
#include "views/widgets/MemorySummaryView.h"
#include "views/widgets/EventScrubber.h"
#include "views/widgets/HeatmapPlot.h"
#include "views/widgets/HeatmapWidget.h"
#include "views/widgets/LegendWidget.h"
#include "views/widgets/ParamFormWidget.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"
#include "views/widgets/SegmentMapCanvas.h"
#include "views/widgets/SegmentMapWidget.h"

using allocscope::app::MainWindow;
namespace views = allocscope::views;
namespace storage = allocscope::storage;

Q_DECLARE_METATYPE(views::ThemeChoice)

namespace {
constexpr int kTimeout = 30000;

using testing::MessageBoxCatcher;

// The first block in `state` of the map (address), or 0.
quint64 firstBlock(const views::SegmentMapData& data, views::BlockState state, bool fullyRequested = false) {
    for (const auto& s : data.segments) {
        for (const auto& b : s.blocks) {
            if (b.state == state && (!fullyRequested || b.requestedSize == b.size) && b.size >= 2 * 1024 * 1024) return b.address;
        }
    }
    return 0;
}
}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString session_;

    void openAndWait(MainWindow& w, const QString& path) {
        QVERIFY(w.openSessionFile(path));
        QTRY_COMPARE_WITH_TIMEOUT(w.runList()->model()->rowCount(), 2, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(w.currentFrame().run == 1 && !w.currentFrame().approximate, kTimeout);
    }

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestMainWindow");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        session_ = dir_.filePath("frag.allocscope");
        testing::recordFrag101(session_, {"", "expandable_segments:True"});
    }

    void menusOfferEveryCommand() {
        MainWindow window;
        QStringList titles;
        for (QAction* action : window.menuBar()->actions()) titles << action->text().remove('&');
        QCOMPARE(titles, QStringList({"File", "View", "Help"}));
        const QMenu* file = window.menuBar()->actions().first()->menu();
        QStringList items;
        for (QAction* action : file->actions()) {
            if (!action->isSeparator()) items << action->text().remove('&');
        }
        QCOMPARE(items, QStringList({"New Session", "Open…", "Open Folder…", "Open Recent", "Reload", "Save As…", "Export", "Quit"}));
        QVERIFY(window.lessonsAction() != nullptr);
        // Every control of the left panel explains itself.
        const auto* panel = window.experimentPanel();
        for (QWidget* w : {static_cast<QWidget*>(panel->workloadBox()), static_cast<QWidget*>(panel->gpuBox()),
                           static_cast<QWidget*>(panel->runButton()), static_cast<QWidget*>(panel->compareButton()),
                           static_cast<QWidget*>(panel->seedBox()), static_cast<QWidget*>(window.scrubber()->slider())}) {
            QVERIFY2(!w->toolTip().isEmpty(), qPrintable(w->objectName()));
        }
    }

    void geometryIsRemembered() {
        {
            MainWindow window;
            window.resize(900, 600);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.close();
        }
        MainWindow again;
        QCOMPARE(again.size(), QSize(900, 600));
        QSettings().remove("mainWindow/geometry");
    }

    void badFilesAreRefusedWithAMessageAndLeftAlone() {
        MessageBoxCatcher boxes;
        const QString junk = dir_.filePath("junk.allocscope");
        QFile file(junk);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("this is not a session");
        file.close();
        const QByteArray before = testfiles::sha256Of(junk);
        MainWindow window;
        QVERIFY(!window.openFile(junk));
        QTRY_COMPARE_WITH_TIMEOUT(boxes.texts.size(), 1, kTimeout);
        QVERIFY2(boxes.texts[0].contains(junk), qPrintable(boxes.texts[0]));
        QCOMPARE(testfiles::sha256Of(junk), before);
        QVERIFY(!QFile::exists(junk + "-wal"));
        QVERIFY(!window.openFile(dir_.filePath("missing.allocscope")));
        QTRY_COMPARE_WITH_TIMEOUT(boxes.texts.size(), 2, kTimeout);
        QVERIFY(boxes.texts[1].contains("does not exist"));
    }

    // A page of garbage in the middle of a session: refused with a message by the integrity
    // check the first background read runs (not on the GUI thread), no document kept, the file unchanged.
    void damagedSessionIsRefusedAndLeftAlone() {
        MessageBoxCatcher boxes;
        const QString damaged = dir_.filePath("damaged-page.allocscope");
        QVERIFY(QFile::copy(session_, damaged));
        {
            QFile file(damaged);
            QVERIFY(file.open(QIODevice::ReadWrite));
            const qint64 page = 4096;
            QVERIFY(file.seek((file.size() / page / 2) * page));
            QByteArray garbage(page, '\0');
            for (int i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919 + 13) & 0xff);
            file.write(garbage);
        }
        const QByteArray before = testfiles::sha256Of(damaged);
        MainWindow window;
        // The middle page holds event data: the quick checks at open pass, and the integrity
        // check of the first background read finds the damage and closes the document.
        QVERIFY(window.openFile(damaged));
        QTRY_COMPARE_WITH_TIMEOUT(boxes.texts.size(), 1, kTimeout);
        QVERIFY2(boxes.texts[0].contains(damaged) && boxes.texts[0].contains("damaged"), qPrintable(boxes.texts[0]));
        QTRY_COMPARE_WITH_TIMEOUT(window.windowTitle(), QString("AllocScope"), kTimeout);
        QCOMPARE(window.runList()->model()->rowCount(), 0);
        QCOMPARE(testfiles::sha256Of(damaged), before);
        QVERIFY(!QFile::exists(damaged + "-wal"));
    }

    void openingASessionShowsItsRunsAndState() {
        const QByteArray before = testfiles::sha256Of(session_);
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        openAndWait(window, session_);
        QCOMPARE(window.recentFiles().value(0), QFileInfo(session_).absoluteFilePath());
        QVERIFY(window.windowTitle().startsWith("frag.allocscope"));
        // At 1280 x 720 with both docks open, every view tab is shown whole: no scroll arrows.
        const QTabBar* bar = window.viewTabs()->tabBar();
        int last = -1;  // the last tab shown: the OOM tab (the last) shows only for a run with an OOM
        for (int i = 0; i < bar->count(); ++i) last = bar->isTabVisible(i) ? i : last;
        QCOMPARE(last, 6);
        QVERIFY2(bar->tabRect(last).right() < bar->width(),
                 qPrintable(QString("last tab ends at %1, the tab bar is %2 px wide").arg(bar->tabRect(last).right()).arg(bar->width())));
        const auto& runs = window.runList()->model()->runs();
        QCOMPARE(runs[1].config, QString("expandable_segments:True"));
        QVERIFY(runs[0].peakReserved > 0);
        // The state on screen is the one storage rebuilds at that event.
        storage::SessionReader reader(session_.toStdString());
        storage::StateCursor cursor(reader, 1);
        const auto frame = window.currentFrame();
        const storage::StateAtEvent state = cursor.load(static_cast<std::uint64_t>(frame.shown));
        const views::SegmentMapData expected = allocscope::app::toSegmentMapData(state.segments);
        QCOMPARE(window.segmentMap()->data().segments.size(), expected.segments.size());
        for (std::size_t i = 0; i < expected.segments.size(); ++i) {
            QCOMPARE(window.segmentMap()->data().segments[i].blocks.size(), expected.segments[i].blocks.size());
        }
        QCOMPARE(window.summaryView()->textView()->toPlainText(),
                 QString::fromStdString(allocscope::alloc::formatMemorySummary(state.stats, 0, false)));
        QCOMPARE(window.heatmap()->data().eventCount, static_cast<qint64>(reader.run(1).eventCount));
        QVERIFY(!window.timeline()->data().buckets.empty());
        // fragmentation-101 calls empty_cache(): the timeline marks it (found by the background scan).
        QTRY_VERIFY_WITH_TIMEOUT(!window.timeline()->markerPoints(views::MarkerKind::EmptyCache).isEmpty(), kTimeout);
        QVERIFY(window.timeline()->markerPoints(views::MarkerKind::Oom).isEmpty());
        // The run as a PyTorch snapshot pickle (background job).
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        const QString pickle = dir_.filePath("run1.pickle");
        window.exportSnapshotPickle(pickle);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QFile exported(pickle);
        QVERIFY(exported.open(QIODevice::ReadOnly));
        QCOMPARE(static_cast<unsigned char>(exported.read(1).at(0)), 0x80);  // pickle protocol marker
        // Selecting the other run shows it.
        window.runList()->selectRun(2);
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == 2, kTimeout);
        QVERIFY(window.segmentMap()->data().segments.front().expandable);
        window.close();
        QCOMPARE(testfiles::sha256Of(session_), before);  // reading never writes the session
        QVERIFY(!QFile::exists(session_ + "-wal"));
    }

    void scrubberStepsByEventOpAndEnds() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        openAndWait(window, session_);
        views::EventScrubber* scrubber = window.scrubber();
        QSlider* slider = scrubber->slider();
        slider->setFocus();
        QTest::keyClick(slider, Qt::Key_Home);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFrame().shown, qint64{0}, kTimeout);
        QTest::keyClick(slider, Qt::Key_Right);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFrame().shown, qint64{1}, kTimeout);
        QTest::keyClick(slider, Qt::Key_Right);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFrame().shown, qint64{2}, kTimeout);
        QTest::keyClick(slider, Qt::Key_Left);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFrame().shown, qint64{1}, kTimeout);
        // Ctrl+→ goes to the first event of the next op.
        const qint64 op = window.currentFrame().op;
        QTest::keyClick(slider, Qt::Key_Right, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().op > op, kTimeout);
        const qint64 opStart = window.currentFrame().shown;
        storage::SessionReader reader(session_.toStdString());
        const auto page = reader.events(1, static_cast<std::uint64_t>(opStart - 1), 2);
        QVERIFY(page.events[0].opIndex != page.events[1].opIndex);
        QTest::keyClick(slider, Qt::Key_End);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFrame().shown, scrubber->eventCount() - 1, kTimeout);
        QVERIFY(scrubber->infoText().contains("op "));
        // The heatmap and timeline cursors follow; a click in the heatmap moves the scrubber.
        QCOMPARE(window.heatmap()->currentEvent(), scrubber->currentEvent());
        window.showView("heatmap");
        views::HeatmapPlot* plot = window.heatmap()->plot();
        QTRY_VERIFY_WITH_TIMEOUT(plot->isVisible() && plot->plotRect().width() > 10, kTimeout);
        const QRect r = plot->plotRect();
        QTest::mouseClick(plot, Qt::LeftButton, {}, QPoint(r.left() + r.width() / 4, r.center().y()));
        QTRY_VERIFY_WITH_TIMEOUT(scrubber->currentEvent() < scrubber->eventCount() / 2, kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFrame().shown, scrubber->currentEvent(), kTimeout);
        // Dragging asks for the nearest keyframe's state, marked approximate.
        emit slider->sliderPressed();
        slider->setSliderDown(true);
        slider->setValue(static_cast<int>(scrubber->eventCount() - 2));
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().approximate, kTimeout);
        QVERIFY(scrubber->infoText().contains("approximate"));
        slider->setSliderDown(false);
        QTRY_VERIFY_WITH_TIMEOUT(!window.currentFrame().approximate && window.currentFrame().shown == scrubber->eventCount() - 2, kTimeout);
    }

    void selectingABlockFillsTheInspector() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        openAndWait(window, session_);
        const quint64 address = firstBlock(window.segmentMap()->data(), views::BlockState::Allocated);
        QVERIFY(address != 0);
        // A click on the block in the map selects it.
        window.showView("segments");
        views::SegmentMapCanvas* canvas = window.segmentMap()->canvas();
        QTRY_VERIFY_WITH_TIMEOUT(canvas->blockRect(address).isValid(), kTimeout);
        QTest::mouseClick(canvas->viewport(), Qt::LeftButton, {}, canvas->blockRect(address).center());
        QTRY_VERIFY_WITH_TIMEOUT(window.inspector()->data().valid, kTimeout);
        const views::BlockInspectorData& data = window.inspector()->data();
        QCOMPARE(data.address, address);
        QCOMPARE(data.state, QString("active_allocated"));
        QVERIFY(data.requested > 0 && data.requested <= data.size);
        QVERIFY(!data.events.empty());
        QCOMPARE(data.events.front().action, QString("alloc"));
        QVERIFY(window.inspector()->plainText().contains("requested by the program"));
        // Going back before its allocation says the block does not exist there.
        window.goToEvent(0);
        QTRY_VERIFY_WITH_TIMEOUT(window.inspector()->plainText().contains("does not exist"), kTimeout);
    }

    void themesColourTheViewsByState_data() {
        QTest::addColumn<views::ThemeChoice>("theme");
        QTest::newRow("light") << views::ThemeChoice::Light;
        QTest::newRow("dark") << views::ThemeChoice::Dark;
    }
    void themesColourTheViewsByState() {
        QFETCH(views::ThemeChoice, theme);
        const views::ThemePalette expected = theme == views::ThemeChoice::Dark ? views::ThemePalette::dark() : views::ThemePalette::light();
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.setTheme(theme);
        QCoreApplication::processEvents();
        QCOMPARE(QSettings().value("view/theme").toString(), theme == views::ThemeChoice::Dark ? QString("dark") : QString("light"));
        openAndWait(window, session_);
        window.showView("segments");
        // At the peak, fragmentation-101 has fully requested 10 MB tensors and cached holes.
        const views::SegmentMapData& map = window.segmentMap()->data();
        const quint64 inactive = firstBlock(map, views::BlockState::Inactive);
        const quint64 allocated = firstBlock(map, views::BlockState::Allocated);
        QVERIFY(inactive != 0 && allocated != 0);
        views::SegmentMapCanvas* canvas = window.segmentMap()->canvas();
        QTRY_VERIFY_WITH_TIMEOUT(canvas->blockRect(inactive).width() > 2, kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(canvas->viewport()->grab().toImage().pixelColor(canvas->blockRect(inactive).center()), expected.inactive, kTimeout);
        const QRect a = canvas->blockRect(allocated);
        QCOMPARE(canvas->viewport()->grab().toImage().pixelColor(a.left() + 2, a.center().y()), expected.requested);
        // The legend shows the same colours.
        const QImage legend = window.segmentMap()->legend()->grab().toImage();
        QCOMPARE(legend.pixelColor(window.segmentMap()->legend()->swatchRect(0).center()), expected.requested);
        QCOMPARE(legend.pixelColor(window.segmentMap()->legend()->swatchRect(2).center()), expected.inactive);
        // Heatmap: a region of cells fully allocated and one never reserved show those colours.
        window.showView("heatmap");
        views::HeatmapPlot* plot = window.heatmap()->plot();
        QTRY_VERIFY_WITH_TIMEOUT(plot->isVisible() && plot->plotRect().width() > 10, kTimeout);
        const views::HeatmapData& heat = window.heatmap()->data();
        QVERIFY(heat.isValid());
        const auto uniform = [&heat](int t, int bin, int state, quint8 value) {
            for (int dt = -2; dt <= 2; ++dt) {
                for (int da = -2; da <= 2; ++da) {
                    const int tt = t + dt, aa = bin + da;
                    if (tt < 0 || aa < 0 || tt >= heat.timeBins || aa >= heat.addressBins) return false;
                    const views::HeatCell& c = heat.cell(tt, aa);
                    if (state >= 0 ? c[static_cast<std::size_t>(state)] != value : (c[0] + c[1] + c[2] + c[3] + c[4]) != 0) return false;
                }
            }
            return true;
        };
        const QImage image = plot->grab().toImage();
        int checkedRequested = 0, checkedUnreserved = 0;
        // Skip the cursor's column (it is drawn over the cells).
        const int cursorX = plot->cellRect(0, 0).left();
        for (int t = 4; t < heat.timeBins - 4 && (checkedRequested == 0 || checkedUnreserved == 0); t += 3) {
            for (int bin = 4; bin < heat.addressBins - 4; bin += 3) {
                const QPoint p = plot->cellRect(t, bin).center().toPoint();
                if (qAbs(p.x() - cursorX) < 3) continue;
                if (checkedRequested == 0 && uniform(t, bin, static_cast<int>(views::HeatState::Requested), 255)) {
                    QCOMPARE(image.pixelColor(p), expected.requested);
                    ++checkedRequested;
                } else if (checkedUnreserved == 0 && uniform(t, bin, -1, 0)) {
                    QCOMPARE(image.pixelColor(p), expected.unreserved);
                    ++checkedUnreserved;
                }
            }
        }
        QVERIFY(checkedRequested > 0);
        QVERIFY(checkedUnreserved > 0);
        window.setTheme(views::ThemeChoice::System);
    }

    // View ▸ Theme: one entry checked, the one in force, whether chosen there or through
    // setTheme (the --theme start option); a new window starts in the remembered theme.
    void themeMenuFollowsTheChoice() {
        MainWindow window;
        auto entry = [&window](const char* name) -> QAction* {
            for (QAction* a : window.findChildren<QAction*>()) {
                if (a->isCheckable() && a->data().toString() == QLatin1String(name)) return a;
            }
            return nullptr;
        };
        QAction* light = entry("light");
        QAction* dark = entry("dark");
        QAction* system = entry("system");
        QVERIFY(light && dark && system);
        window.setTheme(views::ThemeChoice::Dark);
        QVERIFY(dark->isChecked());
        QVERIFY(!light->isChecked() && !system->isChecked());
        QVERIFY(views::ThemePalette::isDark(qApp->palette()));
        views::applyTheme(*qApp, views::ThemeChoice::System);  // as at a new start; "dark" stays remembered
        QVERIFY(!views::ThemePalette::isDark(qApp->palette()));
        {
            MainWindow next;
            QVERIFY(views::ThemePalette::isDark(qApp->palette()));
        }
        light->trigger();
        QVERIFY(light->isChecked() && !dark->isChecked());
        QCOMPARE(QSettings().value("view/theme").toString(), QStringLiteral("light"));
        QVERIFY(!views::ThemePalette::isDark(qApp->palette()));
        window.setTheme(views::ThemeChoice::System);
        QVERIFY(system->isChecked());
    }

    void runningAWorkloadAddsARun() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.newSession());
        QVERIFY(window.isSessionTemporary());
        auto* panel = window.experimentPanel();
        panel->selectWorkload("fragmentation-101");
        panel->paramForm()->setValues({{"tensors", 20}, {"small_tensors", 5}});
        panel->configEditor()->setText("expandable_segments:True");
        QVERIFY(panel->configEditor()->isAccepted());
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 1, kTimeout);
        const views::RunListRow row = window.runList()->model()->runs().front();
        QCOMPARE(row.name, QString("fragmentation-101"));
        QCOMPARE(row.config, QString("expandable_segments:True"));
        QVERIFY(row.source.contains("tensors=20"));
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == 1, kTimeout);
        // A config PyTorch rejects cannot be run.
        panel->configEditor()->setText("garbage_interval:5");
        QVERIFY(!panel->runButton()->isEnabled());

        // Save As keeps the session; the copy opens as a session with the run.
        const QString saved = dir_.filePath("saved.allocscope");
        QVERIFY(window.saveSessionAs(saved));
        QVERIFY(!window.isSessionTemporary());
        QCOMPARE(window.currentFile(), QFileInfo(saved).absoluteFilePath());
        storage::SessionReader reader(saved.toStdString());
        QCOMPARE(reader.runs().size(), std::size_t{1});

        // Export the view in front as a PNG, and the run table as CSV.
        window.showView("segments");
        const QString png = dir_.filePath("segments.png");
        QVERIFY(window.exportCurrentView(png));
        QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 300);
        const QString csv = dir_.filePath("runs.csv");
        QVERIFY(window.exportRunTableCsv(csv));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().contains("fragmentation-101"));
    }

    void comparingTwoConfigsRecordsBothRuns() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.newSession());
        auto* panel = window.experimentPanel();
        panel->selectWorkload("fragmentation-101");
        panel->paramForm()->setValues({{"tensors", 20}, {"small_tensors", 5}});
        panel->configEditor()->setText("expandable_segments:True");
        // The editor's config, the defaults and expandable_segments (here the same): two configs.
        QCOMPARE(panel->compareConfigs().size(), 2);
        QTest::mouseClick(panel->compareButton(), Qt::LeftButton);
        QCOMPARE(window.viewTabs()->currentWidget(), static_cast<QWidget*>(window.comparePage()));
        QTRY_VERIFY_WITH_TIMEOUT(!window.comparePage()->isBusy(), kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(window.comparePage()->shownRuns().size(), 2, kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
        QStringList configs;
        for (const auto& row : window.runList()->model()->runs()) configs << row.config;
        configs.sort();
        QCOMPARE(configs, QStringList({"", "expandable_segments:True"}));
        QVERIFY(panel->runButton()->isEnabled());
    }

    void importingASnapshotMakesATemporarySession() {
        const QString trace = QStringLiteral(ALLOCSCOPE_TEST_DATA) + "/traces/frag101__default.pickle";
        const QByteArray before = testfiles::sha256Of(trace);
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        window.openFile(trace);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QVERIFY(window.isSessionTemporary());
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 1, kTimeout);
        QCOMPARE(window.runList()->model()->runs().front().source.left(8), QString("snapshot"));
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == 1, kTimeout);
        QCOMPARE(testfiles::sha256Of(trace), before);
        QVERIFY(!QFile::exists(trace + "-wal"));
    }
};

QTEST_MAIN(TestMainWindow)
#include "TestMainWindow.moc"
