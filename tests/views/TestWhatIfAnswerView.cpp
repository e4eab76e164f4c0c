// The answer line of a comparison on a recording, worded from its numbers: an OOM that goes away,
// one that stays, one that a config brings, the GPU search's three states, and the "how firm"
// count, which is said only when there is a number.
#include <QtTest>

#include "views/widgets/WhatIfAnswerView.h"

using namespace allocscope::views;

namespace {
constexpr quint64 kGiB = 1024ull * 1024 * 1024;

WhatIfAnswerLine line(WhatIfCounts counts, WhatIfCounts baseline) {
    WhatIfAnswerLine l;
    l.label = QStringLiteral("expandable_segments:True");
    l.against = QStringLiteral("default replayed the same way");
    l.counts = counts;
    l.baseline = baseline;
    return l;
}
}  // namespace

class TestWhatIfAnswerView : public QObject {
    Q_OBJECT
private slots:
    void theOneOomGoesAway() {
        WhatIfAnswerLine l = line({2 * kGiB, 0, -1, 0, 0}, {4 * kGiB, 1, 4812, 5, 30});
        l.smallestGpu = QStringLiteral("24gb");
        const QString s = WhatIfAnswerView::sentence(l);
        QVERIFY2(s.startsWith(QStringLiteral("expandable_segments:True (against default replayed the same way): ")), qPrintable(s));
        QVERIFY2(s.contains(QStringLiteral("the OOM at op 4,812 does not happen")), qPrintable(s));
        QVERIFY(s.contains(QStringLiteral("peak reserved 4.00 GiB → 2.00 GiB")) || s.contains(QStringLiteral("peak reserved 4 GiB → 2 GiB")));
        QVERIFY(s.contains(QStringLiteral("retries 5 → 0")));
        QVERIFY(s.contains(QStringLiteral("cudaMalloc calls 30 → 0")));
        QVERIFY(s.contains(QStringLiteral("smallest GPU preset without an OOM: 24gb")));
        QVERIFY(!s.contains(QStringLiteral("modelled")));  // not counted: nothing is said
    }

    void oomsThatStayOrAppear() {
        const QString stays = WhatIfAnswerView::sentence(line({kGiB, 3, 700, 1, 1}, {kGiB, 18, 628, 1, 1}));
        QVERIFY2(stays.contains(QStringLiteral("still 3 OOMs, the first at op 700 (it had 18, the first at op 628)")), qPrintable(stays));
        QVERIFY(stays.contains(QStringLiteral("retries 1 (unchanged)")));
        const QString appears = WhatIfAnswerView::sentence(line({kGiB, 1, 9, 0, 1}, {kGiB, 0, -1, 0, 1}));
        QVERIFY2(appears.contains(QStringLiteral("1 OOM, the first at op 9 (it had none)")), qPrintable(appears));
        const QString many = WhatIfAnswerView::sentence(line({kGiB, 0, -1, 0, 1}, {kGiB, 18, 628, 0, 1}));
        QVERIFY2(many.contains(QStringLiteral("none of its 18 OOMs (the first at op 628) happen")), qPrintable(many));
        QVERIFY(WhatIfAnswerView::sentence(line({kGiB, 0, -1, 0, 1}, {kGiB, 0, -1, 0, 1})).contains(QStringLiteral("no OOM either")));
    }

    void gpuSearchAndFirmness() {
        WhatIfAnswerLine l = line({kGiB, 0, -1, 0, 1}, {kGiB, 0, -1, 0, 1});
        QVERIFY(WhatIfAnswerView::sentence(l).contains(QStringLiteral("smallest GPU: searching…")));
        l.smallestGpu = QString();
        QVERIFY(WhatIfAnswerView::sentence(l).contains(QStringLiteral("no GPU preset runs it without an OOM")));
        l.modelledDecisions = 12;
        QVERIFY(WhatIfAnswerView::sentence(l).contains(QStringLiteral("12 decisions rested on modelled addresses")));
        l.modelledDecisions = 0;
        QVERIFY(WhatIfAnswerView::sentence(l).contains(QStringLiteral("no decision rested on a modelled address")));
    }

    void theViewShowsOnlyAnAnswer() {
        WhatIfAnswerView view;
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setAnswer({});
        QVERIFY(!view.isVisible());
        WhatIfAnswer answer;
        answer.conditions = QStringLiteral("replayed on h100-80gb, memory fraction 0.03");
        answer.lines.push_back(line({kGiB, 0, -1, 0, 1}, {kGiB, 18, 628, 0, 1}));
        view.setAnswer(answer);
        QVERIFY(view.isVisible());
        QCOMPARE(view.plainText(), WhatIfAnswerView::sentence(answer.lines.front()));
    }
};

QTEST_MAIN(TestWhatIfAnswerView)
#include "TestWhatIfAnswerView.moc"
