#include "views/widgets/LessonPanel.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QShortcut>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace allocscope::views {
namespace {

QLabel* wrapped(QWidget* parent) {
    auto* label = new QLabel(parent);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    return label;
}

QString headline(LessonOutcome outcome) {
    switch (outcome) {
        case LessonOutcome::True: return QStringLiteral("TRUE");
        case LessonOutcome::False: return QStringLiteral("FALSE");
        case LessonOutcome::Depends: return QStringLiteral("IT DEPENDS");
    }
    return {};
}

}  // namespace

LessonPanel::LessonPanel(QWidget* parent) : QWidget(parent) {
    list_ = new QListWidget(this);
    list_->setToolTip(tr("Guided lessons: each tests one piece of common allocator advice"));
    list_->setWordWrap(true);

    auto* detail = new QWidget(this);
    title_ = wrapped(detail);
    QFont big = title_->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.2);
    title_->setFont(big);
    question_ = wrapped(detail);
    claim_ = wrapped(detail);
    claim_->setToolTip(tr("The advice as it is commonly stated; the lesson measures whether it holds"));
    program_ = wrapped(detail);
    program_->setForegroundRole(QPalette::PlaceholderText);
    program_->setToolTip(tr("What the lesson runs, on a simulated GPU"));

    run_ = new QPushButton(tr("&Run lesson"), detail);
    run_->setToolTip(tr("Run the lesson's program under each config on simulated GPUs and compute the verdict"));
    cancel_ = new QPushButton(tr("&Cancel"), detail);
    cancel_->setToolTip(tr("Stop the lesson's runs"));
    progress_ = new QProgressBar(detail);
    progress_->setToolTip(tr("Runs done"));
    status_ = new QLabel(detail);
    auto* runRow = new QHBoxLayout;
    runRow->addWidget(run_);
    runRow->addWidget(cancel_);
    runRow->addWidget(progress_, 1);

    auto* stepBox = new QGroupBox(tr("Steps"), detail);
    stepCounter_ = new QLabel(stepBox);
    stepText_ = wrapped(stepBox);
    stepWhere_ = wrapped(stepBox);
    stepWhere_->setForegroundRole(QPalette::PlaceholderText);
    back_ = new QPushButton(tr("&Back"), stepBox);
    back_->setToolTip(tr("Previous step (Alt+Left)"));
    next_ = new QPushButton(tr("&Next"), stepBox);
    next_->setToolTip(tr("Next step: moves the views to what the step talks about (Alt+Right)"));
    auto* stepButtons = new QHBoxLayout;
    stepButtons->addWidget(stepCounter_, 1);
    stepButtons->addWidget(back_);
    stepButtons->addWidget(next_);
    auto* stepLayout = new QVBoxLayout(stepBox);
    stepLayout->addWidget(stepText_);
    stepLayout->addWidget(stepWhere_);
    stepLayout->addLayout(stepButtons);

    verdictBox_ = new QGroupBox(tr("Verdict"), detail);
    verdictBox_->setToolTip(tr("Computed from the measured numbers by the lesson's rule; never stored"));
    verdict_ = new QLabel(verdictBox_);
    QFont bold = verdict_->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.3);
    verdict_->setFont(bold);
    // The verdict stands out through the palette's highlight colours, so it follows the theme.
    verdict_->setAutoFillBackground(true);
    verdict_->setBackgroundRole(QPalette::Highlight);
    verdict_->setForegroundRole(QPalette::HighlightedText);
    verdict_->setMargin(4);
    verdictText_ = wrapped(verdictBox_);
    numbers_ = new QTableWidget(verdictBox_);
    numbers_->setToolTip(tr("What each run measured (one column per config)"));
    numbers_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    numbers_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    numbers_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* verdictLayout = new QVBoxLayout(verdictBox_);
    verdictLayout->addWidget(verdict_);
    verdictLayout->addWidget(verdictText_);
    verdictLayout->addWidget(numbers_, 1);

    auto* detailLayout = new QVBoxLayout(detail);
    detailLayout->addWidget(title_);
    detailLayout->addWidget(question_);
    detailLayout->addWidget(claim_);
    detailLayout->addWidget(program_);
    detailLayout->addLayout(runRow);
    detailLayout->addWidget(status_);
    detailLayout->addWidget(stepBox);
    detailLayout->addWidget(verdictBox_, 1);

    // The lesson's text scrolls inside its side rather than setting the panel's minimum size: the
    // panel joins the main window's right dock area, and a dock's minimum width is added to the
    // window's (a fixed-width lesson pushed a 1280 px window off the screen).
    auto* detailScroll = new QScrollArea(this);
    detailScroll->setWidget(detail);
    detailScroll->setWidgetResizable(true);
    detailScroll->setFrameShape(QFrame::NoFrame);
    // Text wraps to the dock's width; only a dock narrower than the buttons' row scrolls sideways.
    detailScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);

    // List above the lesson in a narrow dock, beside it once the panel is wide (resizeEvent).
    splitter_ = new QSplitter(Qt::Vertical, this);
    splitter_->addWidget(list_);
    splitter_->addWidget(detailScroll);
    splitter_->setStretchFactor(1, 1);
    splitter_->setChildrenCollapsible(false);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter_);

    connect(list_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0) emit lessonSelected(row);
    });
    connect(list_, &QListWidget::itemActivated, this, [this] {
        if (!running_ && currentLesson() >= 0) emit runRequested(currentLesson());
    });
    connect(run_, &QPushButton::clicked, this, [this] {
        if (currentLesson() >= 0) emit runRequested(currentLesson());
    });
    connect(cancel_, &QPushButton::clicked, this, &LessonPanel::cancelRequested);
    connect(back_, &QPushButton::clicked, this, [this] { showStep(step_ - 1); });
    connect(next_, &QPushButton::clicked, this, [this] { showStep(step_ + 1); });
    auto* backKey = new QShortcut(QKeySequence(Qt::ALT | Qt::Key_Left), this);
    backKey->setContext(Qt::WidgetWithChildrenShortcut);
    connect(backKey, &QShortcut::activated, back_, &QPushButton::click);
    auto* nextKey = new QShortcut(QKeySequence(Qt::ALT | Qt::Key_Right), this);
    nextKey->setContext(Qt::WidgetWithChildrenShortcut);
    connect(nextKey, &QShortcut::activated, next_, &QPushButton::click);

    setTabOrder(list_, run_);
    setTabOrder(run_, cancel_);
    setTabOrder(cancel_, back_);
    setTabOrder(back_, next_);
    setTabOrder(next_, numbers_);
    setLesson({});
}

void LessonPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    const Qt::Orientation wanted = width() >= kSideBySideWidth ? Qt::Horizontal : Qt::Vertical;
    if (splitter_->orientation() == wanted && splitSet_) return;  // the user's split stays
    splitSet_ = true;
    splitter_->setOrientation(wanted);
    const int length = wanted == Qt::Horizontal ? width() : height();
    splitter_->setSizes({length / 3, length - length / 3});  // the list a third, the lesson the rest
}

void LessonPanel::setLessons(const QList<LessonListEntry>& lessons) {
    list_->clear();
    for (const LessonListEntry& l : lessons) {
        auto* item = new QListWidgetItem(QStringLiteral("%1. %2").arg(l.number).arg(l.title), list_);
        item->setToolTip(tr("allocscope-cli lesson %1").arg(l.name));
    }
}

void LessonPanel::setLesson(const LessonData& lesson) {
    lesson_ = lesson;
    title_->setText(lesson.title.isEmpty() ? tr("Choose a lesson") : lesson.title);
    question_->setText(lesson.question);
    claim_->setText(lesson.claim.isEmpty() ? QString() : tr("Claim: \u201c%1\u201d").arg(lesson.claim));
    program_->setText(lesson.program.isEmpty() ? QString() : tr("Runs: %1").arg(lesson.program));
    numbers_->clear();
    numbers_->setColumnCount(static_cast<int>(lesson.runLabels.size()));
    numbers_->setRowCount(static_cast<int>(lesson.numbers.size()));
    numbers_->setHorizontalHeaderLabels(lesson.runLabels);
    for (int r = 0; r < lesson.numbers.size(); ++r) {
        numbers_->setVerticalHeaderItem(r, new QTableWidgetItem(lesson.numbers[r].metric));
        for (int c = 0; c < lesson.numbers[r].values.size(); ++c) {
            auto* item = new QTableWidgetItem(lesson.numbers[r].values[c]);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            numbers_->setItem(r, c, item);
        }
    }
    step_ = -1;
    stepText_->setText(lesson.hasResult || lesson.title.isEmpty() ? QString() : tr("Run the lesson to walk through its steps."));
    stepWhere_->clear();
    updateVerdict();
    if (lesson.hasResult && !lesson.steps.isEmpty()) {
        showStep(0);
    } else {
        stepCounter_->clear();
        updateButtons();
    }
}

void LessonPanel::setRunning(bool running) {
    running_ = running;
    if (running) {
        progress_->setRange(0, 0);
        status_->setText(tr("Running\u2026"));
    } else {
        progress_->setRange(0, 1);
        progress_->setValue(progress_->maximum());
        status_->setText(tr("Done."));  // an error shown right after replaces it
    }
    updateButtons();
}

void LessonPanel::setProgress(int done, int total, const QString& what) {
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
    status_->setText(what);
}

void LessonPanel::showError(const QString& message) {
    status_->setText(message);
    status_->setToolTip(message);
}

void LessonPanel::showStep(int index) {
    if (!lesson_.hasResult || lesson_.steps.isEmpty()) return;
    index = std::clamp(index, 0, static_cast<int>(lesson_.steps.size()) - 1);
    const bool changed = index != step_;
    step_ = index;
    stepCounter_->setText(tr("Step %1 of %2").arg(step_ + 1).arg(lesson_.steps.size()));
    stepText_->setText(lesson_.steps[step_].text);
    stepWhere_->setText(lesson_.steps[step_].where);
    updateButtons();
    if (changed) emit stepRequested(step_);
}

int LessonPanel::currentLesson() const { return list_->currentRow(); }

QString LessonPanel::stepText() const { return stepText_->text(); }

QString LessonPanel::verdictHeadline() const { return lesson_.hasResult ? headline(lesson_.outcome) : QString(); }

QString LessonPanel::statusText() const { return status_->text(); }
Qt::Orientation LessonPanel::layoutOrientation() const { return splitter_->orientation(); }

void LessonPanel::updateButtons() {
    const bool haveSteps = lesson_.hasResult && !lesson_.steps.isEmpty();
    run_->setEnabled(!running_ && list_->currentRow() >= 0);
    cancel_->setEnabled(running_);
    back_->setEnabled(!running_ && haveSteps && step_ > 0);
    next_->setEnabled(!running_ && haveSteps && step_ + 1 < lesson_.steps.size());
}

void LessonPanel::updateVerdict() {
    verdictBox_->setVisible(lesson_.hasResult);
    if (!lesson_.hasResult) return;
    verdict_->setText(headline(lesson_.outcome));
    verdictText_->setText(lesson_.verdictText);
    verdict_->setToolTip(tr("Decided by: %1").arg(lesson_.rule));
}

}  // namespace allocscope::views
