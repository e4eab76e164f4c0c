#include <QtTest>

#include "views/widgets/LegendWidget.h"

using allocscope::views::LegendEntry;
using allocscope::views::LegendWidget;

class TestLegendWidget : public QObject {
    Q_OBJECT
private slots:
    void paintsEachSwatchInItsColour() {
        LegendWidget legend;
        legend.setEntries({{"allocated", QColor(30, 100, 220), ""},
                           {"inactive", QColor(240, 160, 20), ""},
                           {"pending free", QColor(200, 40, 40), ""}});
        legend.resize(500, legend.heightForWidth(500));
        const QImage image = legend.grab().toImage();
        for (int i = 0; i < 3; ++i) {
            const QRect swatch = legend.swatchRect(i);
            QVERIFY(swatch.isValid());
            QCOMPARE(image.pixelColor(swatch.center()), legend.entries()[i].color);
        }
    }
    void wrapsWhenNarrow() {
        LegendWidget legend;
        legend.setEntries({{"allocated (requested)", Qt::blue, ""},
                           {"allocated (rounding waste)", Qt::cyan, ""},
                           {"inactive split", Qt::yellow, ""}});
        QVERIFY(legend.heightForWidth(120) > legend.heightForWidth(2000));
        legend.resize(120, legend.heightForWidth(120));
        QVERIFY(legend.swatchRect(1).top() > legend.swatchRect(0).top());
    }
};

QTEST_MAIN(TestLegendWidget)
#include "TestLegendWidget.moc"
