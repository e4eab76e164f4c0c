// The experiment panel's "Compare with" list, driven like a user: which configs the Compare button
// runs (the editor's first, then the checked rows in order, each distinct config once), lines
// checked by the real parser before they are listed, removal, persistence in QSettings across
// panels, the Compare button off with fewer than two configs, and the fit at 1280x720.
#include <QtTest>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QToolButton>

#include "app/gui/ExperimentPanel.h"
#include "app/gui/FormAdapters.h"
#include "app/gui/MainWindow.h"
#include "views/theme/ThemePalette.h"
#include "views/widgets/ConfigEditorWidget.h"
#include "views/widgets/ConfigListWidget.h"

using allocscope::app::ExperimentPanel;
namespace views = allocscope::views;

namespace {

using Pairs = QList<QPair<QString, QString>>;

QStringList configsOf(const QList<views::ConfigListEntry>& entries) {
    QStringList out;
    for (const auto& e : entries) out << e.config;
    return out;
}

// Types a line into the list's line edit and presses Add, as a user would.
void typeAndAdd(views::ConfigListWidget* list, const QString& text) {
    list->lineEdit()->clear();
    QTest::keyClicks(list->lineEdit(), text);
    QTest::mouseClick(list->addButton(), Qt::LeftButton);
}

int rowOf(views::ConfigListWidget* list, const QString& config) {
    for (int row = 1; row < list->list()->count(); ++row) {
        if (list->list()->item(row)->data(Qt::UserRole).toString() == config) return row;
    }
    return -1;
}

}  // namespace

class TestCompareConfigList : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestCompareConfigList");
    }

    void init() { QSettings().clear(); }

    void firstUseListsTheDefaultsAndComparesTwo() {
        ExperimentPanel panel;
        views::ConfigListWidget* list = panel.compareList();
        QCOMPARE(configsOf(list->entries()), QStringList({"", "expandable_segments:True", "garbage_collection_threshold:0.6",
                                                          "max_split_size_mb:256", "roundup_power2_divisions:4"}));
        QCOMPARE(list->entries(), views::ConfigListWidget::defaultEntries());
        QCOMPARE(list->entries()[0].checked, true);
        QCOMPARE(list->entries()[1].checked, true);
        QCOMPARE(list->entries()[2].checked, false);
        // The editor is empty (the defaults), so its row and the "default" row are one config.
        QCOMPARE(panel.compareConfigs(), Pairs({{"default", ""}, {"expandable_segments:True", "expandable_segments:True"}}));
        QCOMPARE(list->list()->item(0)->text(), QString("current: default"));
        QVERIFY(panel.compareButton()->isEnabled());
        QVERIFY(panel.compareButton()->toolTip().contains("expandable_segments:True"));
    }

    void theEditorsConfigComesFirstThenCheckedRowsInOrder() {
        ExperimentPanel panel;
        views::ConfigListWidget* list = panel.compareList();
        panel.configEditor()->setText("max_split_size_mb:512");
        QCOMPARE(list->list()->item(0)->text(), QString("current: max_split_size_mb:512"));
        list->list()->item(rowOf(list, "roundup_power2_divisions:4"))->setCheckState(Qt::Checked);
        list->list()->item(rowOf(list, "expandable_segments:True"))->setCheckState(Qt::Unchecked);
        QCOMPARE(panel.compareConfigs(), Pairs({{"max_split_size_mb:512", "max_split_size_mb:512"},
                                                {"default", ""},
                                                {"roundup_power2_divisions:4", "roundup_power2_divisions:4"}}));
        // Space (the keyboard) checks the selected row too.
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        list->list()->setFocus();
        list->list()->setCurrentRow(rowOf(list, "max_split_size_mb:256"));
        QTest::keyClick(list->list(), Qt::Key_Space);
        QCOMPARE(panel.compareConfigs().size(), 4);
        QCOMPARE(panel.compareConfigs()[2].second, QString("max_split_size_mb:256"));  // list order
        QCOMPARE(panel.compareConfigs()[3].second, QString("roundup_power2_divisions:4"));
    }

    void addingAValidLineListsItCheckedAndComparesIt() {
        ExperimentPanel panel;
        views::ConfigListWidget* list = panel.compareList();
        QSignalSpy changed(list, &views::ConfigListWidget::entriesChanged);
        typeAndAdd(list, "max_split_size_mb:128,garbage_collection_threshold:0.8");
        QCOMPARE(changed.size(), 1);
        QCOMPARE(list->entries().size(), 6);
        QCOMPARE(list->entries().last(), (views::ConfigListEntry{"max_split_size_mb:128,garbage_collection_threshold:0.8", true}));
        QVERIFY(list->lineEdit()->text().isEmpty());
        QCOMPARE(panel.compareConfigs().last().second, QString("max_split_size_mb:128,garbage_collection_threshold:0.8"));
        // Return in the line edit adds too.
        QTest::keyClicks(list->lineEdit(), "release_lock_on_cudamalloc:True");
        QTest::keyClick(list->lineEdit(), Qt::Key_Return);
        QCOMPARE(list->entries().last().config, QString("release_lock_on_cudamalloc:True"));
        QVERIFY(list->message().isEmpty());
    }

    void refusingAnInvalidLineShowsTheParsersMessage() {
        ExperimentPanel panel;
        views::ConfigListWidget* list = panel.compareList();
        const QList<views::ConfigListEntry> before = list->entries();
        const QString bad = "max_split_size_mb:abc";
        const views::ValidationResult verdict = allocscope::app::validateConfigText(bad);
        QVERIFY(!verdict.accepted);
        QVERIFY(!verdict.issues.empty());
        QSignalSpy changed(list, &views::ConfigListWidget::entriesChanged);
        typeAndAdd(list, bad);
        QCOMPARE(list->entries(), before);
        QCOMPARE(changed.size(), 0);
        QVERIFY2(list->message().contains(verdict.verdict), qPrintable(list->message()));
        QVERIFY2(list->message().contains(verdict.issues.front().message), qPrintable(list->message()));
        QCOMPARE(list->lineEdit()->text(), bad);  // kept for the user to fix

        // A misspelt key: the parser's suggestion is shown as well.
        const QString typo = "expandable_segment:True";
        const views::ValidationResult typoVerdict = allocscope::app::validateConfigText(typo);
        QVERIFY(!typoVerdict.accepted);
        QString why;
        QVERIFY(!list->addConfig(typo, &why));
        QVERIFY2(why.contains(typoVerdict.verdict), qPrintable(why));
        if (!typoVerdict.issues.front().suggestion.isEmpty()) QVERIFY(why.contains(typoVerdict.issues.front().suggestion));
        QCOMPARE(list->entries(), before);
    }

    // An error under the list is in the theme's alarm colour, and stays so across a theme switch
    // (the message line has a palette of its own).
    void errorMessageFollowsTheTheme() {
        views::applyTheme(*qApp, views::ThemeChoice::Light);
        QCoreApplication::processEvents();
        ExperimentPanel panel;
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        views::ConfigListWidget* list = panel.compareList();
        QVERIFY(!list->addConfig("max_split_size_mb:abc"));
        QLabel* message = nullptr;
        for (QLabel* label : list->findChildren<QLabel*>()) {
            if (!label->text().isEmpty() && label->text() == list->message()) message = label;
        }
        QVERIFY(message != nullptr);
        QCOMPARE(message->palette().color(QPalette::WindowText), views::ThemePalette::forPalette(qApp->palette()).selection);
        views::applyTheme(*qApp, views::ThemeChoice::Dark);
        const QColor darkAlarm = views::ThemePalette::forPalette(qApp->palette()).selection;
        QTRY_COMPARE(message->palette().color(QPalette::WindowText), darkAlarm);
        views::applyTheme(*qApp, views::ThemeChoice::Light);
    }

    void inlineEditsAreCheckedByTheParser() {
        ExperimentPanel panel;
        views::ConfigListWidget* list = panel.compareList();
        QListWidgetItem* item = list->list()->item(rowOf(list, "max_split_size_mb:256"));
        item->setText("max_split_size_mb:nope");  // what the item delegate does on commit
        QCOMPARE(item->text(), QString("max_split_size_mb:256"));
        QCOMPARE(item->data(Qt::UserRole).toString(), QString("max_split_size_mb:256"));
        QVERIFY(list->message().contains(allocscope::app::validateConfigText("max_split_size_mb:nope").verdict));
        item->setText("max_split_size_mb:300");
        QCOMPARE(item->data(Qt::UserRole).toString(), QString("max_split_size_mb:300"));
        QVERIFY(configsOf(list->entries()).contains("max_split_size_mb:300"));
        // Editing a row into another row's config is refused.
        item->setText("expandable_segments:True");
        QCOMPARE(item->data(Qt::UserRole).toString(), QString("max_split_size_mb:300"));
        QVERIFY(list->message().contains("already in the list"));
    }

    void removingRowsButNeverTheCurrentOne() {
        ExperimentPanel panel;
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        views::ConfigListWidget* list = panel.compareList();
        list->list()->setCurrentRow(rowOf(list, "garbage_collection_threshold:0.6"));
        QVERIFY(list->removeButton()->isEnabled());
        QTest::mouseClick(list->removeButton(), Qt::LeftButton);
        QVERIFY(!configsOf(list->entries()).contains("garbage_collection_threshold:0.6"));
        QCOMPARE(list->entries().size(), 4);
        // The Delete key removes the selected row.
        list->list()->setFocus();
        list->list()->setCurrentRow(rowOf(list, "expandable_segments:True"));
        QTest::keyClick(list->list(), Qt::Key_Delete);
        QCOMPARE(configsOf(list->entries()), QStringList({"", "max_split_size_mb:256", "roundup_power2_divisions:4"}));
        // The current row stays.
        list->list()->setCurrentRow(0);
        QVERIFY(!list->removeButton()->isEnabled());
        QTest::keyClick(list->list(), Qt::Key_Delete);
        QCOMPARE(list->list()->count(), 4);
        QVERIFY(list->list()->item(0)->text().startsWith("current:"));
    }

    void theListPersistsAcrossPanels() {
        {
            ExperimentPanel panel;
            views::ConfigListWidget* list = panel.compareList();
            typeAndAdd(list, "max_split_size_mb:64,expandable_segments:True");
            list->list()->item(rowOf(list, "expandable_segments:True"))->setCheckState(Qt::Unchecked);
            list->list()->setCurrentRow(rowOf(list, "roundup_power2_divisions:4"));
            list->removeSelected();
            list->setExpanded(false);
        }
        ExperimentPanel again;
        views::ConfigListWidget* list = again.compareList();
        const QList<views::ConfigListEntry> expected{{"", true},
                                                     {"expandable_segments:True", false},
                                                     {"garbage_collection_threshold:0.6", false},
                                                     {"max_split_size_mb:256", false},
                                                     {"max_split_size_mb:64,expandable_segments:True", true}};
        QCOMPARE(list->entries(), expected);
        QVERIFY(!list->isExpanded());
        QCOMPARE(again.compareConfigs(), Pairs({{"default", ""},
                                                {"max_split_size_mb:64,expandable_segments:True", "max_split_size_mb:64,expandable_segments:True"}}));

        // An emptied list stays empty (it does not fall back to the first-use defaults).
        while (list->list()->count() > 1) {
            list->list()->setCurrentRow(1);
            list->removeSelected();
        }
        ExperimentPanel third;
        QVERIFY(third.compareList()->entries().isEmpty());
    }

    void savedLinesPyTorchRefusesAreLeftOutAndSaid() {
        {
            QSettings settings;
            settings.beginWriteArray("compare/configs", 2);
            settings.setArrayIndex(0);
            settings.setValue("config", "expandable_segments:True");
            settings.setValue("checked", true);
            settings.setArrayIndex(1);
            settings.setValue("config", "max_split_size_mb:lots");
            settings.setValue("checked", true);
            settings.endArray();
        }
        ExperimentPanel panel;
        QCOMPARE(configsOf(panel.compareList()->entries()), QStringList({"expandable_segments:True"}));
        QVERIFY2(panel.compareList()->message().contains("max_split_size_mb:lots"), qPrintable(panel.compareList()->message()));
        QVERIFY2(panel.compareList()->message().contains(allocscope::app::validateConfigText("max_split_size_mb:lots").verdict),
                 qPrintable(panel.compareList()->message()));
        QVERIFY(panel.compareList()->isExpanded());  // opened, so the message is seen
    }

    void duplicatesAreListedAndComparedOnce() {
        ExperimentPanel panel;
        views::ConfigListWidget* list = panel.compareList();
        // The same config spelt differently (order, spaces): refused as already listed.
        QString why;
        QVERIFY(list->addConfig("max_split_size_mb:512,expandable_segments:True", &why));
        QVERIFY(!list->addConfig("expandable_segments:True, max_split_size_mb:512", &why));
        QVERIFY2(why.contains("already in the list"), qPrintable(why));
        QVERIFY(!list->addConfig("  expandable_segments:True ", &why));
        QVERIFY(!list->addConfig("default", &why));
        QCOMPARE(list->entries().size(), 6);
        // The editor's config equal to a checked row: compared once, in the current row's place.
        panel.configEditor()->setText("expandable_segments:True");
        QCOMPARE(panel.compareConfigs(), Pairs({{"expandable_segments:True", "expandable_segments:True"},
                                                {"default", ""},
                                                {"max_split_size_mb:512,expandable_segments:True", "max_split_size_mb:512,expandable_segments:True"}}));
        // Spelt another way in the editor, still the same config.
        panel.configEditor()->setText("expandable_segments:True,max_split_size_mb:512");
        QCOMPARE(panel.compareConfigs().size(), 3);
        QCOMPARE(panel.compareConfigs().first().second, QString("expandable_segments:True,max_split_size_mb:512"));
    }

    void addCurrentKeepsTheEditorsLine() {
        ExperimentPanel panel;
        views::ConfigListWidget* list = panel.compareList();
        panel.configEditor()->setText("garbage_collection_threshold:0.7");
        QTest::mouseClick(list->addCurrentButton(), Qt::LeftButton);
        QCOMPARE(list->entries().last(), (views::ConfigListEntry{"garbage_collection_threshold:0.7", true}));
        QString why;
        QVERIFY(!list->addCurrent(&why));  // already there
        QCOMPARE(list->entries().size(), 6);
        // A config PyTorch refuses cannot be added, and the editor's refusal disables Compare.
        panel.configEditor()->setText("garbage_collection_threshold:7");
        QVERIFY(!list->addCurrentButton()->isEnabled());
        QVERIFY(!list->addCurrent(&why));
        QVERIFY(!panel.compareButton()->isEnabled());
        QVERIFY(!panel.compareConfigs().contains(QPair<QString, QString>("garbage_collection_threshold:7", "garbage_collection_threshold:7")));
    }

    void compareIsOffWithFewerThanTwoConfigs() {
        ExperimentPanel panel;
        views::ConfigListWidget* list = panel.compareList();
        QVERIFY(panel.compareButton()->isEnabled());
        list->list()->item(rowOf(list, "expandable_segments:True"))->setCheckState(Qt::Unchecked);
        QCOMPARE(panel.compareConfigs(), Pairs({{"default", ""}}));
        QVERIFY(!panel.compareButton()->isEnabled());
        QVERIFY2(panel.compareButton()->toolTip().contains("two different configs"), qPrintable(panel.compareButton()->toolTip()));
        QVERIFY(list->message().contains("two different configs"));
        QVERIFY(panel.runButton()->isEnabled());
        // A different config in the editor makes two.
        panel.configEditor()->setText("expandable_segments:True");
        QVERIFY(panel.compareButton()->isEnabled());
        QVERIFY(list->message().isEmpty());
        panel.configEditor()->setText("");
        QVERIFY(!panel.compareButton()->isEnabled());
        list->list()->item(rowOf(list, "max_split_size_mb:256"))->setCheckState(Qt::Checked);
        QVERIFY(panel.compareButton()->isEnabled());
        // Busy (a recording runs): off whatever the list says.
        panel.setBusy(true);
        QVERIFY(!panel.compareButton()->isEnabled());
        panel.setBusy(false);
        QVERIFY(panel.compareButton()->isEnabled());
    }

    void everyControlExplainsItselfAndFitsTheWindow() {
        allocscope::app::MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* panel = window.experimentPanel();
        views::ConfigListWidget* list = panel->compareList();
        // The dock's scroll area shows the panel: everything up to the Run / Compare buttons must
        // be inside its viewport without scrolling.
        auto* scroll = qobject_cast<QScrollArea*>(panel->parentWidget()->parentWidget());
        QVERIFY(scroll != nullptr);
        const auto inView = [&](QWidget* w) {
            const QRect r(w->mapTo(scroll->viewport(), QPoint(0, 0)), w->size());
            return scroll->viewport()->rect().contains(r);
        };
        // First use: collapsed to one line that says how many configs Compare runs.
        QVERIFY(!list->isExpanded());
        QVERIFY(list->toggleButton()->text().contains("2"));
        for (QWidget* w : {static_cast<QWidget*>(list->toggleButton()), static_cast<QWidget*>(panel->runButton()),
                           static_cast<QWidget*>(panel->compareButton()), static_cast<QWidget*>(panel->configEditor()->rawEditor())}) {
            QVERIFY2(inView(w), w->metaObject()->className());
        }
        // Opened with the keyboard: its controls explain themselves and take Tab focus.
        list->toggleButton()->setFocus();
        QTest::keyClick(list->toggleButton(), Qt::Key_Space);
        QVERIFY(list->isExpanded());
        for (QWidget* w : {static_cast<QWidget*>(list->list()), static_cast<QWidget*>(list->lineEdit()),
                           static_cast<QWidget*>(list->addButton()), static_cast<QWidget*>(list->addCurrentButton()),
                           static_cast<QWidget*>(list->removeButton()), static_cast<QWidget*>(list->toggleButton())}) {
            QVERIFY2(!w->toolTip().isEmpty(), w->metaObject()->className());
            QVERIFY2(w->focusPolicy() & Qt::TabFocus, w->metaObject()->className());
            QVERIFY2(w->isVisible(), w->metaObject()->className());
        }
        // A short list: three to five rows tall.
        const int row = list->list()->sizeHintForRow(0);
        QVERIFY(list->list()->viewport()->height() >= 3 * row);
        QVERIFY(list->list()->viewport()->height() <= 5 * row + 4);
        // The panel scrolls to it if needed: the whole list can be brought into view at once.
        scroll->ensureWidgetVisible(list->list(), 0, 0);
        QVERIFY(inView(list->list()));
        QTest::mouseClick(list->toggleButton(), Qt::LeftButton);
        QVERIFY(!list->list()->isVisible());
    }
};

QTEST_MAIN(TestCompareConfigList)
#include "TestCompareConfigList.moc"
