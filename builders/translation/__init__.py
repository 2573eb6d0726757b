"""NLLB through CTranslate2: conversion, the translator, placeholder strategies, the tiny sample model."""
