// The main window's heatmap on a run built to show every state: a small-pool segment of 1-byte
// tensors (each a 512-byte block: almost all rounding waste), a 40 MiB block freed while another
// stream still uses it (pending free for 300 events), and an expandable segment whose pages
// empty_cache unmaps (unmapped afterwards). Each state's colour is sampled in both themes where
// the grid says a cell region is wholly in it; the raw-address toggle (View menu and checkbox)
// is one remembered setting.
#include <QCheckBox>
#include <QMenuBar>
#include <QSettings>
#include <QtTest>

#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/ProgramBuilder.h"
#include "app/gui/MainWindow.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionWriter.h"
#include "views/theme/ThemePalette.h"
#include "views/widgets/HeatmapPlot.h"
#include "views/widgets/HeatmapWidget.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"

using namespace allocscope;
using app::MainWindow;
Q_DECLARE_METATYPE(allocscope::views::ThemeChoice)

namespace {
constexpr int kTimeout = 60000;
constexpr std::uint64_t kMiB = 1024 * 1024;

void recordEveryState(const QString& path) {
    alloc::ProgramBuilder b("states.py");
    for (int i = 0; i < 4096; ++i) b.alloc(1);  // one 2 MiB small segment of 512-byte blocks
    const std::uint64_t kept = b.alloc(40 * kMiB);
    const std::uint64_t shared = b.alloc(40 * kMiB);
    b.recordStream(shared, alloc::kSideStream);
    b.freeWithUses(shared, {alloc::kSideStream}, 300);
    for (int i = 0; i < 300; ++i) b.alloc(1, 0, alloc::kSideStream);  // the free completes after these
    b.free(kept);
    b.emptyCache();  // the expandable segment's pages are unmapped
    for (int i = 0; i < 1500; ++i) b.free(b.alloc(1));
    const alloc::GeneratedProgram program = b.take();
    storage::SessionWriter writer(path.toStdString());
    const alloc::GpuPreset preset = *alloc::findGpuPreset("h100-80gb");
    storage::RecordTarget target;
    target.info.name = "every-state";
    target.info.config = "expandable_segments:True";
    target.info.gpu = preset.name;
    target.info.totalMemory = preset.totalMemory;
    target.config = alloc::parseConfig(target.info.config).config;
    target.totalMemory = preset.totalMemory;
    target.otherMemory = preset.contextMemory;
    storage::recordProgram(writer, program.program, &program.stacks, target);
    writer.flush();
}

QAction* findAction(QMenuBar* bar, const QString& text) {
    for (QAction* menu : bar->actions()) {
        if (!menu->menu()) continue;
        for (QAction* a : menu->menu()->actions()) {
            if (a->text().remove('&') == text) return a;
        }
    }
    return nullptr;
}
}  // namespace

class TestMainWindowHeatmap : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString session_;

    void openAndWait(MainWindow& w) {
        QVERIFY(w.openSessionFile(session_));
        QTRY_COMPARE_WITH_TIMEOUT(w.runList()->model()->rowCount(), 1, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(w.currentFrame().run == 1 && !w.currentFrame().approximate, kTimeout);
        w.showView("heatmap");
        QTRY_VERIFY_WITH_TIMEOUT(w.heatmap()->data().isValid() && w.heatmap()->plot()->plotRect().width() > 10, kTimeout);
    }

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestMainWindowHeatmap");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        session_ = dir_.filePath("states.allocscope");
        recordEveryState(session_);
    }

    void everyStateHasItsColour_data() {
        QTest::addColumn<views::ThemeChoice>("theme");
        QTest::newRow("light") << views::ThemeChoice::Light;
        QTest::newRow("dark") << views::ThemeChoice::Dark;
    }
    void everyStateHasItsColour() {
        QFETCH(views::ThemeChoice, theme);
        const views::ThemePalette expected = theme == views::ThemeChoice::Dark ? views::ThemePalette::dark() : views::ThemePalette::light();
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.setTheme(theme);
        openAndWait(window);
        window.heatmap()->setRawAddresses(false);
        window.goToEvent(0);  // the cursor at the left edge, out of the way
        QTRY_VERIFY_WITH_TIMEOUT(window.heatmap()->currentEvent() == 0, kTimeout);
        views::HeatmapPlot* plot = window.heatmap()->plot();
        const views::HeatmapData& heat = window.heatmap()->data();
        // A cell whose 3 x 3 neighbourhood is wholly (>= 250/255) in `state`, away from the cursor.
        const int cursorX = qRound(plot->cellRect(0, 0).left());
        auto findUniform = [&](views::HeatState state) -> QPoint {
            for (int t = 1; t + 1 < heat.timeBins; ++t) {
                for (int a = 1; a + 1 < heat.addressBins; ++a) {
                    bool all = true;
                    for (int dt = -1; dt <= 1 && all; ++dt)
                        for (int da = -1; da <= 1 && all; ++da) all = heat.cell(t + dt, a + da)[static_cast<std::size_t>(state)] >= 250;
                    const QPoint p = plot->cellRect(t, a).center().toPoint();
                    if (all && qAbs(p.x() - cursorX) > 6) return p;
                }
            }
            return {-1, -1};
        };
        const QImage image = plot->grab().toImage();
        const std::pair<views::HeatState, QColor> states[] = {
            {views::HeatState::RoundingWaste, expected.roundingWaste},
            {views::HeatState::PendingFree, expected.pendingFree},
            {views::HeatState::Unmapped, expected.unmapped},
            {views::HeatState::Requested, expected.requested},
        };
        for (const auto& [state, colour] : states) {
            const QPoint p = findUniform(state);
            QVERIFY2(p.x() >= 0, qPrintable(QString("no cell region wholly in state %1").arg(static_cast<int>(state))));
            // Within 2 of the colour: 250..255 shares blend a trace of the rest in.
            const QColor got = image.pixelColor(p);
            QVERIFY2(qAbs(got.red() - colour.red()) <= 2 && qAbs(got.green() - colour.green()) <= 2 && qAbs(got.blue() - colour.blue()) <= 2,
                     qPrintable(QString("state %1: %2 vs %3").arg(static_cast<int>(state)).arg(got.name(), colour.name())));
        }
        window.setTheme(views::ThemeChoice::System);
    }

    void rawAddressesIsOneRememberedSetting() {
        QSettings().remove("view/heatmapRawAddresses");
        {
            MainWindow window;
            window.resize(1280, 720);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            openAndWait(window);
            QAction* action = findAction(window.menuBar(), "Heatmap on Raw Addresses");
            QVERIFY(action);
            QVERIFY(!action->isChecked());
            QVERIFY(!window.heatmap()->data().rawAddresses);
            const std::size_t squeezedRanges = window.heatmap()->data().ranges.size();
            QVERIFY(squeezedRanges > 1);  // small segments, side-stream segment, expandable reservation
            action->trigger();
            QVERIFY(window.heatmap()->rawAddresses());
            QVERIFY(window.heatmap()->rawToggle()->isChecked());
            QVERIFY(window.heatmap()->data().rawAddresses);
            QCOMPARE(window.heatmap()->data().ranges.size(), std::size_t(1));
            window.heatmap()->rawToggle()->click();  // the checkbox turns the action off again
            QVERIFY(!action->isChecked());
            window.heatmap()->rawToggle()->click();
            QVERIFY(action->isChecked());
        }
        QCOMPARE(QSettings().value("view/heatmapRawAddresses").toBool(), true);
        MainWindow again;
        again.resize(1280, 720);
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        openAndWait(again);
        QVERIFY(again.heatmap()->data().rawAddresses);
        QSettings().remove("view/heatmapRawAddresses");
    }
};

QTEST_MAIN(TestMainWindowHeatmap)
#include "TestMainWindowHeatmap.moc"
