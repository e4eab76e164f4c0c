// Renders every view with realistic synthetic data, in both themes and at two window sizes, and
// saves PNGs into the working directory for a person to look at (legibility, colours, layout at
// 800×500). The assertions check that each picture was written and actually shows something.
#include <QApplication>
#include <QHBoxLayout>
#include <QSet>
#include <QSplitter>
#include <QtTest>

#include "ViewTestData.h"
#include "views/charts/TimelineChartView.h"
#include "views/theme/ThemePalette.h"
#include "views/widgets/ConfigEditorWidget.h"
#include "views/widgets/ExportHelpers.h"
#include "views/widgets/HeatmapWidget.h"
#include "views/widgets/MemorySummaryView.h"
#include "views/widgets/ParamFormWidget.h"
#include "views/widgets/SegmentMapWidget.h"

using namespace allocscope::views;
Q_DECLARE_METATYPE(allocscope::views::ThemeChoice)

namespace {
ValidationResult demoValidate(const QString& text) {
    ValidationResult r;
    const int bad = static_cast<int>(text.indexOf(QStringLiteral("expandabel")));
    if (bad < 0) {
        r.verdict = QStringLiteral("accepted");
        return r;
    }
    r.accepted = false;
    r.verdict = QStringLiteral("ValueError at the first CUDA use: Unrecognized key 'expandabel' in Allocator config.");
    r.issues.push_back({ValidationIssue::Severity::Error, QStringLiteral("unknown key 'expandabel'"), bad, 10,
                        QStringLiteral("expandable_segments")});
    r.correctedText = QString(text).replace(QStringLiteral("expandabel"), QStringLiteral("expandable_segments"));
    return r;
}

int distinctColours(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
    return static_cast<int>(colours.size());
}

void save(QWidget* w, const QString& name) {
    QCoreApplication::processEvents();
    const QString path = name + QStringLiteral(".png");
    QString error;
    QVERIFY2(ExportHelpers::exportPng(w, path, &error), qPrintable(error));
    const QImage img(path);
    QCOMPARE(img.size(), w->size());
    QVERIFY2(distinctColours(img) > 8, qPrintable(path));
}

QWidget* mainLike(QWidget* parent) {
    auto* root = new QSplitter(Qt::Horizontal, parent);
    auto* config = new ConfigEditorWidget(root);
    config->setValidator(demoValidate);
    config->setText(QStringLiteral("max_split_size_mb:256,expandabel:True"));
    auto* centre = new QSplitter(Qt::Vertical, root);
    auto* map = new SegmentMapWidget(centre);
    map->setData(viewtest::realisticSegmentMap(60));
    map->selectBlock(map->data().segments[1].blocks[0].address);
    auto* heat = new HeatmapWidget(centre);
    heat->setData(viewtest::realisticHeatmap());
    heat->setCurrentEvent(7000);
    auto* chart = new TimelineChartView(centre);
    chart->setData(viewtest::realisticTimeline());
    chart->setCurrentEvent(7000);
    root->setStretchFactor(0, 1);
    root->setStretchFactor(1, 3);
    return root;
}
}  // namespace

class TestViewsGallery : public QObject {
    Q_OBJECT
private slots:
    void cleanup() { applyTheme(*qApp, ThemeChoice::Light); }

    void gallery_data() {
        QTest::addColumn<ThemeChoice>("theme");
        QTest::addColumn<QSize>("size");
        QTest::newRow("light-1280") << ThemeChoice::Light << QSize(1280, 720);
        QTest::newRow("dark-1280") << ThemeChoice::Dark << QSize(1280, 720);
        QTest::newRow("light-800") << ThemeChoice::Light << QSize(800, 500);
        QTest::newRow("dark-800") << ThemeChoice::Dark << QSize(800, 500);
    }
    void gallery() {
        QFETCH(ThemeChoice, theme);
        QFETCH(QSize, size);
        applyTheme(*qApp, theme);
        QCoreApplication::processEvents();
        const QString suffix = QStringLiteral("_%1_%2x%3").arg(theme == ThemeChoice::Dark ? "dark" : "light").arg(size.width()).arg(size.height());

        SegmentMapWidget map;
        map.resize(size);
        map.setData(viewtest::realisticSegmentMap(60));
        for (const ViewSegment& seg : map.data().segments)
            if (seg.blocks.size() >= 3) {
                QVERIFY(map.selectBlock(seg.blocks[1].address));
                break;
            }
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));
        save(&map, QStringLiteral("segmentmap") + suffix);
        map.setZoom(6.0);
        save(&map, QStringLiteral("segmentmap-zoomed") + suffix);

        HeatmapWidget heat;
        heat.resize(size);
        heat.setData(viewtest::realisticHeatmap());
        heat.setCurrentEvent(7000);
        heat.show();
        QVERIFY(QTest::qWaitForWindowExposed(&heat));
        save(&heat, QStringLiteral("heatmap") + suffix);

        TimelineChartView chart;
        chart.resize(size);
        chart.setData(viewtest::realisticTimeline());
        chart.setCurrentEvent(7000);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        save(&chart, QStringLiteral("timeline") + suffix);

        MemorySummaryView summary;
        summary.resize(size.width() / 2, size.height() / 2);
        summary.setData(viewtest::realisticSummary());
        summary.show();
        QVERIFY(QTest::qWaitForWindowExposed(&summary));
        save(&summary, QStringLiteral("summary-table") + suffix);
        summary.showText();
        save(&summary, QStringLiteral("summary-text") + suffix);

        ConfigEditorWidget config;
        config.resize(size.width() / 2, size.height());
        config.setValidator(demoValidate);
        config.setText(QStringLiteral("max_split_size_mb:256,expandabel:True"));
        config.show();
        QVERIFY(QTest::qWaitForWindowExposed(&config));
        save(&config, QStringLiteral("config") + suffix);

        ParamFormWidget params;
        params.setSpecs({{QStringLiteral("layers"), QStringLiteral("Layers"), QStringLiteral("Transformer blocks"), ParamKind::Int, 1, 96, 1, 0, QString(), qlonglong(24), {}},
                         {QStringLiteral("batch"), QStringLiteral("Batch size"), QStringLiteral("Sequences per step"), ParamKind::Int, 1, 4096, 1, 0, QString(), qlonglong(32), {}},
                         {QStringLiteral("jitter"), QStringLiteral("Size jitter"), QStringLiteral("Relative size noise"), ParamKind::Double, 0, 1, 0.05, 2, QString(), 0.1, {}},
                         {QStringLiteral("ckpt"), QStringLiteral("Checkpointing"), QStringLiteral("Recompute activations"), ParamKind::Bool, 0, 0, 1, 0, QString(), true, {}},
                         {QStringLiteral("opt"), QStringLiteral("Optimizer"), QStringLiteral("Optimizer state"), ParamKind::Choice, 0, 0, 1, 0, QString(), QStringLiteral("adam"),
                          {QStringLiteral("sgd"), QStringLiteral("adam")}}});
        params.resize(size.width() / 3, size.height() / 3);
        params.show();
        QVERIFY(QTest::qWaitForWindowExposed(&params));
        save(&params, QStringLiteral("params") + suffix);

        QWidget window;
        auto* layout = new QHBoxLayout(&window);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->addWidget(mainLike(&window));
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        save(&window, QStringLiteral("mainlike") + suffix);
    }
};

QTEST_MAIN(TestViewsGallery)
#include "TestViewsGallery.moc"
