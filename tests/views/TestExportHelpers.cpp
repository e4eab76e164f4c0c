#include <QFile>
#include <QImage>
#include <QSvgRenderer>
#include <QXmlStreamReader>
#include <QtTest>

#include "ViewTestData.h"
#include "views/charts/TimelineChartView.h"
#include "views/widgets/ExportHelpers.h"
#include "views/widgets/HeatmapWidget.h"

using namespace allocscope::views;

class TestExportHelpers : public QObject {
    Q_OBJECT
private slots:
    void pngHasTheWidgetsSize() {
        HeatmapWidget w;
        w.resize(640, 360);
        w.setData(viewtest::realisticHeatmap(100, 50));
        QString error;
        QVERIFY2(ExportHelpers::exportPng(&w, QStringLiteral("heatmap.png"), &error), qPrintable(error));
        QImage img(QStringLiteral("heatmap.png"));
        QCOMPARE(img.size(), QSize(640, 360));
    }

    void svgIsParseable_data() {
        QTest::addColumn<int>("which");
        QTest::newRow("heatmap") << 0;
        QTest::newRow("timeline chart") << 1;
    }
    void svgIsParseable() {
        QFETCH(int, which);
        HeatmapWidget heatmap;
        TimelineChartView chart;
        QWidget* w = which == 0 ? static_cast<QWidget*>(&heatmap) : static_cast<QWidget*>(&chart);
        heatmap.setData(viewtest::realisticHeatmap(100, 50));
        chart.setData(viewtest::realisticTimeline(300));
        w->resize(800, 450);
        const QString path = QStringLiteral("view%1.svg").arg(which);
        QString error;
        QVERIFY2(ExportHelpers::exportSvg(w, path, QStringLiteral("AllocScope view"), &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&file);
        QString root;
        int elements = 0;
        while (!xml.atEnd()) {
            if (xml.readNext() == QXmlStreamReader::StartElement) {
                if (root.isEmpty()) root = xml.name().toString();
                ++elements;
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QCOMPARE(root, QStringLiteral("svg"));
        QVERIFY(elements > 20);  // real drawing, not an empty document
        QSvgRenderer renderer(path);
        QVERIFY(renderer.isValid());
        QCOMPARE(renderer.viewBox().size(), QSize(800, 450));
    }

    void unwritablePathIsAClearError() {
        HeatmapWidget w;
        w.resize(200, 100);
        QString error;
        QVERIFY(!ExportHelpers::exportSvg(&w, QStringLiteral("no-such-dir/x.svg"), QString(), &error));
        QVERIFY(error.contains(QStringLiteral("no-such-dir/x.svg")));
        QVERIFY(!ExportHelpers::exportPng(&w, QStringLiteral("no-such-dir/x.png"), &error));
        QVERIFY(error.contains(QStringLiteral("no-such-dir/x.png")));
        QVERIFY(!QFile::exists(QStringLiteral("no-such-dir")));
    }
};

QTEST_MAIN(TestExportHelpers)
#include "TestExportHelpers.moc"
