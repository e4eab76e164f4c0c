#include "app/gui/StartupScript.h"

#include <QApplication>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPixmap>
#include <QTabWidget>
#include <QTimer>

#include <algorithm>
#include <cstdio>

#include "app/gui/ComparePage.h"
#include "app/gui/ExperimentPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/OomAnswerController.h"
#include "app/gui/SearchController.h"
#include "app/gui/StacksPage.h"
#include "views/theme/ThemePalette.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/CompareWidget.h"
#include "views/widgets/RunListWidget.h"

namespace allocscope::app {

namespace {
constexpr int kPollMs = 50;
constexpr int kGiveUpTicks = 1200;  // 60 s: a screenshot run never hangs a script
constexpr int kSettleTicks = 20;    // let charts lay out and paint before grabbing
}  // namespace

StartupScript::StartupScript(MainWindow& window, CommandLineOptions options)
    : window_(window), options_(std::move(options)), timer_(new QTimer(this)) {
    timer_->setInterval(kPollMs);
    connect(timer_, &QTimer::timeout, this, &StartupScript::poll);
}

void StartupScript::start() {
    if (!options_.theme.isEmpty()) {
        window_.setTheme(options_.theme == QLatin1String("dark")    ? views::ThemeChoice::Dark
                         : options_.theme == QLatin1String("light") ? views::ThemeChoice::Light
                                                                    : views::ThemeChoice::System);
    }
    if (!options_.files.isEmpty()) window_.openFiles(options_.files);
    if (options_.run > 0) window_.selectRun(options_.run);
    if (options_.event >= 0) window_.goToEvent(options_.event);
    if (!options_.view.isEmpty()) window_.showView(options_.view);
    const bool needsWaiting = options_.block != 0 || !options_.find.isEmpty() || !options_.screenshot.isEmpty() || options_.event >= 0 ||
                              !options_.action.isEmpty() || !options_.config.isNull() || options_.memoryFraction >= 0;
    if (needsWaiting) timer_->start();
}

void StartupScript::poll() {
    ++ticks_;
    if (ticks_ > kGiveUpTicks) {
        std::fprintf(stderr, "allocscope: gave up waiting for the session to load\n");
        timer_->stop();
        exitCode_ = 1;
        if (!options_.screenshot.isEmpty()) QApplication::exit(1);
        return;
    }
    const RunStateFrame& frame = window_.currentFrame();
    const bool wantedRun = options_.run <= 0 || frame.run == options_.run;
    // A recording is offered as the program a moment after the run list (its file is read then).
    const bool wantsPanel = !options_.config.isNull() || options_.memoryFraction >= 0 || !options_.action.isEmpty();
    const bool panelSettled = !wantsPanel || window_.experimentPanel()->isRecordingChosen() || ticks_ > kSettleTicks * 4;
    const bool loaded = frame.run > 0 && wantedRun && !window_.isBusy() && !frame.approximate && panelSettled &&
                        (options_.event < 0 || frame.shown == options_.event || window_.currentRun() != frame.run);
    if (stage_ == 0) {
        if (options_.files.isEmpty()) {
            stage_ = 2;
        } else if (!loaded) {
            return;
        } else {
            if (options_.event >= 0 && frame.shown != options_.event) window_.goToEvent(options_.event);
            if (!options_.view.isEmpty()) window_.showView(options_.view.section(QLatin1Char('-'), 0, 0));
            if (options_.view == QLatin1String("compare") && options_.action.isEmpty()) {
                // The runs of the selected run's program (same name), side by side.
                QList<int> runs;
                const auto& rows = window_.runList()->model()->runs();
                QString program;
                for (const auto& row : rows) {
                    if (row.number == frame.run) program = row.name.section(QStringLiteral(" · "), 0, 0);
                }
                for (const auto& row : rows) {
                    if (row.name.section(QStringLiteral(" · "), 0, 0) == program) runs << row.number;
                }
                window_.showComparison(runs);
            }
            if (options_.block != 0) window_.selectBlock(options_.block);
            if (!options_.find.isEmpty()) {
                window_.search()->field()->setText(options_.find);
                window_.search()->search(options_.find);
            }
            if (!options_.config.isNull()) window_.experimentPanel()->setConfigText(options_.config);
            if (options_.memoryFraction >= 0) window_.experimentPanel()->memoryFractionBox()->setValue(options_.memoryFraction);
            if (options_.action == QLatin1String("run")) window_.runExperiment();
            if (options_.action == QLatin1String("compare")) window_.compareExperiment();
            stage_ = options_.action.isEmpty() ? 1 : 3;
            ticks_ = 0;
            return;
        }
    }
    if (stage_ == 3) {  // Run / Compare: wait for it (and for Run's new run on screen), then let the views settle
        if (window_.isBusy()) return;
        const auto& rows = window_.runList()->model()->runs();
        const int newest = rows.empty() ? 0 : std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
                                                  return a.number < b.number;
                                              })->number;
        if (options_.action == QLatin1String("run") && (frame.run != newest || frame.approximate)) return;
        window_.comparePage()->setCurrentOp(window_.currentFrame().op);  // its maps at the scrubber's op
        stage_ = 1;
        ticks_ = 0;
        return;
    }
    if (options_.view == QLatin1String("compare-maps")) {  // the Compare tab's last page
        QTabWidget* pages = window_.comparePage()->compareWidget()->tabs();
        pages->setCurrentIndex(pages->count() - 1);
    }
    if (stage_ == 1 && (ticks_ < kSettleTicks || window_.stacksPage()->isComputing() || window_.oomAnswer()->isComputing())) return;
    timer_->stop();
    if (!options_.screenshot.isEmpty()) {
        if (!window_.grab().save(options_.screenshot)) {
            std::fprintf(stderr, "allocscope: cannot write the screenshot (%s)\n", qPrintable(options_.screenshot));
            exitCode_ = 1;
        }
        QApplication::exit(exitCode_);
    }
}

}  // namespace allocscope::app
