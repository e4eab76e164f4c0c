#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QtTest>

#include "views/widgets/ParamFormWidget.h"

using namespace allocscope::views;

namespace {
std::vector<ParamSpec> specs() {
    ParamSpec layers{QStringLiteral("layers"), QStringLiteral("Layers"), QStringLiteral("Transformer blocks"), ParamKind::Int,
                     1, 96, 1, 0, QString(), qlonglong(12), {}};
    ParamSpec scale{QStringLiteral("scale"), QStringLiteral("Activation scale"), QStringLiteral("Multiplier"), ParamKind::Double,
                    0.1, 8.0, 0.1, 2, QStringLiteral(" ×"), 1.5, {}};
    ParamSpec ckpt{QStringLiteral("checkpointing"), QStringLiteral("Activation checkpointing"), QStringLiteral("Recompute"),
                   ParamKind::Bool, 0, 0, 1, 0, QString(), true, {}};
    ParamSpec opt{QStringLiteral("optimizer"), QStringLiteral("Optimizer"), QStringLiteral("State per parameter"),
                  ParamKind::Choice, 0, 0, 1, 0, QString(), QStringLiteral("adam"),
                  {QStringLiteral("sgd"), QStringLiteral("adam"), QStringLiteral("adafactor")}};
    return {layers, scale, ckpt, opt};
}
}  // namespace

class TestParamFormWidget : public QObject {
    Q_OBJECT
private slots:
    void startsAtDefaults() {
        ParamFormWidget form;
        form.setSpecs(specs());
        const ParamValues v = form.values();
        QCOMPARE(v.value(QStringLiteral("layers")).toLongLong(), 12);
        QCOMPARE(v.value(QStringLiteral("scale")).toDouble(), 1.5);
        QCOMPARE(v.value(QStringLiteral("checkpointing")).toBool(), true);
        QCOMPARE(v.value(QStringLiteral("optimizer")).toString(), QStringLiteral("adam"));
        QVERIFY(form.editor(QStringLiteral("layers"))->toolTip().contains(QStringLiteral("Transformer blocks")));
        QVERIFY(form.editor(QStringLiteral("layers"))->toolTip().contains(QStringLiteral("1 – 96")));
    }

    void returnsEditedValues() {
        ParamFormWidget form;
        form.setSpecs(specs());
        form.show();
        QVERIFY(QTest::qWaitForWindowExposed(&form));
        QSignalSpy changed(&form, &ParamFormWidget::valuesChanged);
        auto* layers = static_cast<QSpinBox*>(form.editor(QStringLiteral("layers")));
        layers->setFocus();
        layers->selectAll();
        QTest::keyClicks(layers, QStringLiteral("48"));
        QTest::keyClick(layers, Qt::Key_Enter);
        auto* ckpt = static_cast<QCheckBox*>(form.editor(QStringLiteral("checkpointing")));
        QTest::mouseClick(ckpt, Qt::LeftButton, {}, QPoint(4, ckpt->height() / 2));
        static_cast<QComboBox*>(form.editor(QStringLiteral("optimizer")))->setCurrentIndex(2);
        static_cast<QDoubleSpinBox*>(form.editor(QStringLiteral("scale")))->setValue(99.0);  // clamped to the range
        const ParamValues v = form.values();
        QCOMPARE(v.value(QStringLiteral("layers")).toLongLong(), 48);
        QCOMPARE(v.value(QStringLiteral("checkpointing")).toBool(), false);
        QCOMPARE(v.value(QStringLiteral("optimizer")).toString(), QStringLiteral("adafactor"));
        QCOMPARE(v.value(QStringLiteral("scale")).toDouble(), 8.0);
        QVERIFY(changed.count() >= 4);
        form.setValues({{QStringLiteral("layers"), qlonglong(3)}});
        QCOMPARE(form.values().value(QStringLiteral("layers")).toLongLong(), 3);
        QCOMPARE(form.values().value(QStringLiteral("optimizer")).toString(), QStringLiteral("adafactor"));
        form.resetToDefaults();
        QCOMPARE(form.values().value(QStringLiteral("layers")).toLongLong(), 12);
        // A new spec list replaces the form.
        form.setSpecs({specs()[2]});
        QCOMPARE(form.values().size(), 1);
        QVERIFY(!form.editor(QStringLiteral("layers")));
    }
};

QTEST_MAIN(TestParamFormWidget)
#include "TestParamFormWidget.moc"
