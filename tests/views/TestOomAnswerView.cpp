// The OOM tab's view on its own: the headline and facts as the answer says them, fragmentation
// and really-full worded from the bytes, the request bar drawn to scale (the request's colour
// longer than the largest free block's), the what-if table's rows (the interval column only for
// an interval), the holders with their stacks, PyTorch's message copied verbatim, the Stacks
// button asking for the oom event, and the colours following a dark theme.
#include <QtTest>

#include <QClipboard>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableView>
#include <QTreeWidget>

#include "views/theme/ThemePalette.h"
#include "views/widgets/OomAnswerView.h"
#include "views/widgets/OomRequestBar.h"
#include "views/widgets/OomWhatIfModel.h"

using namespace allocscope::views;

namespace {
constexpr quint64 kMiB = 1024ull * 1024;
constexpr quint64 kGiB = 1024 * kMiB;
const QString kMessage = QStringLiteral(
    "CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 8.00 GiB of which 0 bytes is free. "
    "Of the allocated memory 704.00 MiB is allocated by PyTorch, and 7.03 GiB is reserved by PyTorch but unallocated.");

// oom-with-free-memory's failure: 7 GiB of cached holes, none of them 256 MiB.
OomAnswerData fragmented() {
    OomAnswerData a;
    a.run = 3;
    a.runName = QStringLiteral("oom-with-free-memory · default");
    a.oomCount = 2;
    a.headline = QStringLiteral("Yes: expandable_segments:True avoids this OOM at the inferred limit");
    a.requestBytes = 256 * kMiB;
    a.stream = 0;
    a.op = 4812;
    a.event = 9000;
    a.limit = {8 * kGiB, 8 * kGiB, QStringLiteral("device total memory")};
    a.reserved = static_cast<qint64>(8 * kGiB - 100 * kMiB);
    a.allocated = static_cast<qint64>(704 * kMiB);
    a.cachedFree = a.reserved - a.allocated;
    a.largestFree = static_cast<qint64>(180 * kMiB);
    a.verdict = OomVerdict::Fragmentation;
    for (int i = 0; i < 3; ++i) {
        OomHolderRow h;
        h.address = 0x7f0000000000ull + static_cast<quint64>(i) * 0x10000000ull;
        h.size = (40 - static_cast<quint64>(i)) * kMiB;
        h.requested = h.size - 512;
        h.topFrame = QStringLiteral("train.py:%1 forward").arg(40 + i);
        h.stack = {h.topFrame, QStringLiteral("train.py:10 main")};
        a.holders.push_back(h);
    }
    a.holdersOmitted = 17;
    a.holdersOmittedBytes = 300 * kMiB;
    a.pytorchMessage = kMessage;
    OomWhatIfRow def;
    def.config = QString();
    def.recorded = true;
    def.oom = true;
    def.where = QStringLiteral("op 4,812: 256 MiB on stream 0");
    def.peakReserved = static_cast<qint64>(a.reserved);
    OomWhatIfRow exp;
    exp.config = QStringLiteral("expandable_segments:True");
    exp.peakReserved = static_cast<qint64>(1 * kGiB);
    exp.headroom = static_cast<qint64>(7 * kGiB);
    a.whatIf = {def, exp};
    return a;
}

// The widest run of `color` pixels on the row through the middle of `rect`.
int runOf(const QImage& image, const QRect& rect, const QColor& color) {
    const int y = rect.center().y();
    int best = 0;
    int run = 0;
    for (int x = 0; x < image.width(); ++x) {
        run = image.pixelColor(x, y) == color ? run + 1 : 0;
        best = std::max(best, run);
    }
    return best;
}

QImage grab(QWidget& w) { return w.grab().toImage().convertToFormat(QImage::Format_RGB32); }

}  // namespace

class TestOomAnswerView : public QObject {
    Q_OBJECT
private slots:
    void init() { applyTheme(*qApp, ThemeChoice::Light); }

    void headlineAndFacts() {
        OomAnswerView view;
        view.resize(1000, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(!view.headlineLabel()->isVisible());  // nothing to say yet
        view.showStatus(QStringLiteral("Computing the OOM answer…"));
        QVERIFY(view.statusLabel()->isVisible());
        view.setAnswer(fragmented());
        QVERIFY(!view.statusLabel()->isVisible());
        QVERIFY(view.headlineLabel()->isVisible());
        QCOMPARE(view.headlineLabel()->text(), fragmented().headline);
        QVERIFY(view.headlineLabel()->font().pointSizeF() > view.font().pointSizeF() * 1.3);  // large text
        const QStringList facts = view.facts();
        QVERIFY2(facts.at(0) == QStringLiteral("Request: 256 MiB on stream 0 (default), at op 4,812 (event 9,000)"), qPrintable(facts.at(0)));
        QVERIFY2(facts.at(1) == QStringLiteral("Limit: 8.00 GiB (device total memory)"), qPrintable(facts.at(1)));
        QCOMPARE(facts.at(5), QStringLiteral("Largest free block: 180 MiB"));
        QVERIFY2(facts.at(6).startsWith(QStringLiteral("Verdict: fragmentation: 7.21 GiB is cached free, more than the 256 MiB requested, "
                                                       "but the largest free block is 180 MiB")),
                 qPrintable(facts.at(6)));

        OomAnswerData full = fragmented();
        full.cachedFree = static_cast<qint64>(12 * kMiB);
        full.verdict = OomVerdict::ReallyFull;
        QVERIFY(OomAnswerView::verdictText(full).startsWith(QStringLiteral("really full: only 12.0 MiB is cached free in all")));
        OomLimit interval{6 * kGiB, 6 * kGiB + 256 * kMiB, QStringLiteral("bracketed by reservations")};
        QCOMPARE(OomAnswerView::limitText(interval), QStringLiteral("between 6.00 GiB and 6.25 GiB (bracketed by reservations)"));
        QCOMPARE(OomAnswerView::limitText({}), QStringLiteral("not known"));

        // A qualified headline: the answer large, its note in normal text under it.
        OomAnswerData noted = fragmented();
        noted.headline = QStringLiteral("Yes: expandable_segments:True would have avoided this OOM; note: the simulated run differs");
        view.setAnswer(noted);
        QCOMPARE(view.headlineLabel()->text(), QStringLiteral("Yes: expandable_segments:True would have avoided this OOM"));
        QCOMPARE(view.headlineNote()->text(), QStringLiteral("Note: the simulated run differs"));
        QVERIFY(view.headlineNote()->isVisible());
        QVERIFY(view.headlineNote()->font().pointSizeF() < view.headlineLabel()->font().pointSizeF());
        view.setAnswer(fragmented());
        QVERIFY(!view.headlineNote()->isVisible());
    }

    void theBarDrawsTheRequestAgainstTheLargestFreeBlock() {
        OomRequestBar bar;
        bar.resize(700, bar.sizeHint().height());
        bar.setAnswer(fragmented());
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        const ThemePalette theme = ThemePalette::forPalette(bar.palette());
        const QImage image = grab(bar);
        const QColor requestColor = theme.marker[static_cast<int>(MarkerKind::Oom)];
        const int request = runOf(image, bar.barRect(OomRequestBar::Row::Request), requestColor);
        const int largest = runOf(image, bar.barRect(OomRequestBar::Row::LargestFree), theme.inactive);
        const int room = runOf(image, bar.barRect(OomRequestBar::Row::Room), theme.unmappedHatch);
        QVERIFY2(request > largest && largest > room && room > 0, qPrintable(QStringLiteral("%1 %2 %3").arg(request).arg(largest).arg(room)));
        // On one scale: 256 : 180 : 100 MiB.
        QVERIFY2(std::abs(largest * 256 - request * 180) <= 256 * 2, qPrintable(QStringLiteral("%1 %2").arg(request).arg(largest)));
        QCOMPARE(bar.room(), static_cast<qint64>(100 * kMiB));
        // The top track: allocated (blue) then cached free (orange) up to reserved, near the limit.
        const QRect memory = bar.barRect(OomRequestBar::Row::Memory);
        const int blue = runOf(image, memory, theme.requested);
        const int orange = runOf(image, memory, theme.inactive);
        QVERIFY2(orange > 8 * blue, qPrintable(QStringLiteral("%1 %2").arg(blue).arg(orange)));
        QVERIFY(memory.width() > bar.width() * 9 / 10);
        // Unknown bytes draw nothing rather than a zero-length lie.
        OomAnswerData unknown = fragmented();
        unknown.largestFree = -1;
        bar.setAnswer(unknown);
        QVERIFY(bar.barRect(OomRequestBar::Row::LargestFree).isEmpty());
        QVERIFY(!bar.barRect(OomRequestBar::Row::Request).isEmpty());
    }

    void whatIfTableAndHolders() {
        OomAnswerView view;
        view.resize(1000, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setAnswer(fragmented());
        const OomWhatIfModel* model = view.whatIfModel();
        QCOMPARE(model->rowCount(), 2);
        QCOMPARE(model->index(0, OomWhatIfModel::ConfigColumn).data().toString(), QStringLiteral("default (the run's)"));
        QCOMPARE(model->index(0, OomWhatIfModel::OomColumn).data().toString(), QStringLiteral("OOM at op 4,812: 256 MiB on stream 0"));
        QCOMPARE(model->index(0, OomWhatIfModel::HeadroomColumn).data().toString(), QStringLiteral("-"));
        QCOMPARE(model->index(1, OomWhatIfModel::ConfigColumn).data().toString(), QStringLiteral("expandable_segments:True"));
        QCOMPARE(model->index(0, OomWhatIfModel::ConfigColumn).data(Qt::ToolTipRole).toString(), QStringLiteral("PyTorch's defaults"));
        QCOMPARE(model->index(1, OomWhatIfModel::OomColumn).data().toString(), QStringLiteral("no OOM"));
        QCOMPARE(model->index(1, OomWhatIfModel::PeakReservedColumn).data().toString(), QStringLiteral("1.00 GiB"));
        QCOMPARE(model->index(1, OomWhatIfModel::HeadroomColumn).data().toString(), QStringLiteral("7.00 GiB"));
        QVERIFY(model->index(1, OomWhatIfModel::OomColumn).data(Qt::FontRole).value<QFont>().bold());  // the way out stands out
        QVERIFY(!model->index(0, OomWhatIfModel::OomColumn).data(Qt::FontRole).isValid());
        // A point limit: no interval column; an interval shows what holds over it.
        QVERIFY(view.whatIfTable()->isColumnHidden(OomWhatIfModel::IntervalColumn));
        OomAnswerData interval = fragmented();
        interval.limit = {6 * kGiB, 7 * kGiB, QStringLiteral("bracketed")};
        interval.whatIf[0].overInterval = QStringLiteral("OOM at every limit in it");
        interval.whatIf[1].overInterval = QStringLiteral("no OOM at any limit in it");
        view.setAnswer(interval);
        // Every answer holds over the interval: one line says so, no column.
        QVERIFY(view.whatIfTable()->isColumnHidden(OomWhatIfModel::IntervalColumn));
        QVERIFY(view.whatIfNoteLabel()->isVisible());
        QVERIFY2(view.whatIfNoteLabel()->text().startsWith(QStringLiteral("Each config's answer is the same at every limit of the interval (6.00 GiB – 7.00 GiB)")),
                 qPrintable(view.whatIfNoteLabel()->text()));
        // One depends on it: the column, and no such line.
        interval.whatIf[1].overInterval = QStringLiteral("OOMs below 6.50 GiB");
        interval.whatIf[1].holdsOverInterval = false;
        view.setAnswer(interval);
        QVERIFY(!view.whatIfTable()->isColumnHidden(OomWhatIfModel::IntervalColumn));
        QVERIFY(!view.whatIfNoteLabel()->isVisible());
        QCOMPARE(model->index(1, OomWhatIfModel::IntervalColumn).data().toString(), QStringLiteral("OOMs below 6.50 GiB"));
        QCOMPARE(model->index(0, OomWhatIfModel::IntervalColumn).data().toString(), QStringLiteral("same throughout"));
        QCOMPARE(model->index(0, OomWhatIfModel::IntervalColumn).data(Qt::ToolTipRole).toString(), QStringLiteral("OOM at every limit in it"));
        // A long config wraps at its commas instead of pushing the answer columns out of sight.
        OomAnswerData combo = interval;
        combo.whatIf[1].config = QStringLiteral("expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:4,garbage_collection_threshold:0.6");
        view.setAnswer(combo);
        QCOMPARE(model->index(1, OomWhatIfModel::ConfigColumn).data().toString(),
                 QStringLiteral("expandable_segments:True, max_split_size_mb:128, roundup_power2_divisions:4, garbage_collection_threshold:0.6"));
        QCOMPARE(model->index(1, OomWhatIfModel::ConfigColumn).data(Qt::ToolTipRole).toString(), combo.whatIf[1].config);
        QVERIFY(view.whatIfTable()->columnWidth(OomWhatIfModel::ConfigColumn) < view.whatIfTable()->width() / 2);
        QVERIFY(view.whatIfTable()->rowHeight(1) > view.whatIfTable()->rowHeight(0));  // wrapped
        // Every row on screen without scrolling the table itself.
        QVERIFY(view.whatIfTable()->height() >= view.whatIfTable()->rowViewportPosition(1) + view.whatIfTable()->rowHeight(1));

        const QTreeWidget* holders = view.holders();
        QCOMPARE(holders->topLevelItemCount(), 3);
        QCOMPARE(holders->topLevelItem(0)->text(0), QStringLiteral("40.0 MiB"));
        QCOMPARE(holders->topLevelItem(0)->text(2), QStringLiteral("0x7f0000000000"));
        QCOMPARE(holders->topLevelItem(0)->text(3), QStringLiteral("train.py:40 forward"));
        QCOMPARE(holders->topLevelItem(0)->childCount(), 2);
        QCOMPARE(holders->topLevelItem(0)->child(1)->text(3), QStringLiteral("train.py:10 main"));

        // While the what-if still runs: its note, no rows.
        OomAnswerData running = fragmented();
        running.whatIf.clear();
        running.whatIfNote = QStringLiteral("Replaying 12 configs at 8.00 GiB…");
        view.setAnswer(running);
        QVERIFY(!view.whatIfTable()->isVisible());
        QCOMPARE(model->rowCount(), 0);
    }

    void messageCopyAndStacksButton() {
        OomAnswerView view;
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setAnswer(fragmented());
        QCOMPARE(view.messageBox()->toPlainText(), kMessage);
        QVERIFY(view.messageBox()->isReadOnly());
        QVERIFY(QFontInfo(view.messageBox()->font()).fixedPitch());
        QApplication::clipboard()->clear();
        QTest::mouseClick(view.copyButton(), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), kMessage);

        QSignalSpy stacks(&view, &OomAnswerView::stacksRequested);
        QTest::mouseClick(view.stacksButton(), Qt::LeftButton);
        QCOMPARE(stacks.size(), 1);
        QCOMPARE(stacks.front().front().toLongLong(), 9000);
        OomAnswerData noEvent = fragmented();
        noEvent.event = -1;
        noEvent.pytorchMessage.clear();
        view.setAnswer(noEvent);
        QVERIFY(!view.stacksButton()->isEnabled());
        QVERIFY(!view.copyButton()->isEnabled());
    }

    void aSmallWindowScrolls() {
        OomAnswerView view;
        view.resize(520, 320);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setAnswer(fragmented());
        QTRY_VERIFY(view.scrollArea()->verticalScrollBar()->maximum() > 0);
        // The facts wrap instead of widening the page past the window.
        QVERIFY2(view.scrollArea()->widget()->width() <= view.scrollArea()->viewport()->width(),
                 qPrintable(QStringLiteral("%1 > %2").arg(view.scrollArea()->widget()->width()).arg(view.scrollArea()->viewport()->width())));
    }

    void followsTheDarkTheme() {
        OomAnswerView view;
        view.resize(1000, 700);
        view.setAnswer(fragmented());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        applyTheme(*qApp, ThemeChoice::Dark);
        const QColor darkText = qApp->palette().color(QPalette::WindowText);
        QTRY_COMPARE(view.headlineLabel()->palette().color(QPalette::WindowText), darkText);
        QTRY_VERIFY(ThemePalette::isDark(view.bar()->palette()));
        const ThemePalette theme = ThemePalette::forPalette(view.bar()->palette());
        QCOMPARE(theme.theme, Theme::Dark);
        const QImage image = grab(*view.bar());
        QVERIFY(runOf(image, view.bar()->barRect(OomRequestBar::Row::Request), theme.marker[static_cast<int>(MarkerKind::Oom)]) > 0);
        QVERIFY(runOf(image, view.bar()->barRect(OomRequestBar::Row::LargestFree), ThemePalette::dark().inactive) > 0);
        QCOMPARE(runOf(image, view.bar()->barRect(OomRequestBar::Row::LargestFree), ThemePalette::light().inactive), 0);
        // The bar's labels are drawn in the palette's text colour: light pixels on the dark theme.
        int light = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < 120; ++x) light += image.pixelColor(x, y).lightness() > 180 ? 1 : 0;
        QVERIFY(light > 20);
        applyTheme(*qApp, ThemeChoice::Light);
    }
};

QTEST_MAIN(TestOomAnswerView)
#include "TestOomAnswerView.moc"
